/**
 * The evaluation studio's pages: read by ADMIN and OWNER (`agent:review`), the review pages' gate;
 * creating datasets and running experiments needs `agent:manage` (`canManage`; the procedures check
 * both again).
 */
export { reviewGate as studioGate } from '../access';
