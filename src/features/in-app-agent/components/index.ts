export { AssistantPanel } from './AssistantPanel';
export { AssistantToggle } from './AssistantToggle';
export { ConversationMessages } from './ConversationMessages';
export { InAppAgentProvider, useInAppAgent } from './InAppAgentProvider';
export { forgetAssistantData } from './tab-channel';
