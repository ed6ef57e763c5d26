import { z } from 'zod';

/**
 * The tools of the eval's own MCP servers (issue 41: "use a tool of a configured MCP server", "an approval that is
 * denied"). Their data are invented, so no model knows them without calling the tool. The same definitions are
 * served over stdio by dist/eval-tools.js (src/eval-tools.ts) to the eval's service, and called in process by the
 * bare loop (`--baseline`), so both harnesses offer the model the same tools.
 */
export interface EvalTool {
  name: string;
  description: string;
  input: z.ZodObject<Record<string, z.ZodString>>;
  /** Annotated `readOnlyHint`: under `approval: auto` such a tool runs without asking. */
  readOnly: boolean;
  run(args: Record<string, string>): string;
}

const ORDERS: Record<string, { status: string; carrier: string; tracking: string }> = {
  'A-1042': { status: 'shipped', carrier: 'Yamato Transport', tracking: 'YT-88412-0457' },
  'A-1043': { status: 'packing', carrier: 'none yet', tracking: 'none yet' },
};

const lookupOrder: EvalTool = {
  name: 'lookup_order',
  description: 'Looks up a customer order by its id (such as A-1042): its status, carrier and tracking number.',
  input: z.object({ order_id: z.string().describe('the order id, such as A-1042') }),
  readOnly: true,
  run: ({ order_id }) => {
    const order = ORDERS[order_id?.trim().toUpperCase()];
    return order ? JSON.stringify({ order_id, ...order }) : `no order ${JSON.stringify(order_id)}`;
  },
};

const deploy: EvalTool = {
  name: 'deploy',
  description: 'Deploys a released version of the shop to an environment (staging or production).',
  input: z.object({ version: z.string().describe('the version, such as 1.4.2'), environment: z.string().describe('staging or production') }),
  readOnly: false,
  run: ({ version, environment }) => `deployed ${version} to ${environment}`,
};

/**
 * The servers the eval configures on its service, by name: `eval-release` asks for approval on every call
 * (`approval: always`), which the eval answers with deny.
 */
export const EVAL_SERVERS: Record<string, { approval: 'auto' | 'always'; tools: EvalTool[] }> = {
  'eval-orders': { approval: 'auto', tools: [lookupOrder] },
  'eval-release': { approval: 'always', tools: [deploy] },
};

/** The name the service gives a server's tool for the model (src/mcp-client/offered-tools.ts, modelToolName). */
export const mcpToolName = (server: string, tool: string) => `${server}__${tool}`;
