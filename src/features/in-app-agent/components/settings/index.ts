export { AssistantBudgets } from './Budgets';
export { AssistantMemberData } from './MemberData';
export { AssistantRetention } from './Retention';
