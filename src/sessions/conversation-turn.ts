/**
 * One earlier turn of a session: what was asked (with image metadata only) and what was answered. A
 * session's history is made of them, so the type lives with the sessions; the agent reads them.
 */
export interface ConversationTurn {
  request: string;
  imageCount: number;
  answer: string;
}
