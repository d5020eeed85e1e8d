export { AssistantPanel } from './AssistantPanel';
export { AssistantToggle } from './AssistantToggle';
export { ConversationMessages } from './ConversationMessages';
export { InAppAgentProvider } from './InAppAgentProvider';
export { forgetAssistantData } from './tab-channel';
export { useInAppAgent } from './use-in-app-agent';
