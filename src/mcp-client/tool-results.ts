import type { CallToolResult, ContentBlock } from '@modelcontextprotocol/client';
import type { ToolResult } from '../agent/core/tool-source.js';
import { excerpt } from '../agent/output-excerpt.js';

/** Images a call may bring back for a vision model; more are described only. */
const MAX_IMAGES = 4;
const MAX_IMAGE_BYTES = 10 * 1024 * 1024;

/**
 * Another server's `tools/call` result as the model sees it: text as it is, images as bytes (and a
 * line saying so), everything else described, structured content as JSON text, the whole bounded to
 * `maxChars`; `isError` results are tool errors. What the server wrote is data, never instructions:
 * it reaches the model only as a tool result, bounded like every other tool's output.
 */
export function toModelResult(result: CallToolResult, maxChars: number): ToolResult {
  const parts: string[] = [];
  const images: Buffer[] = [];
  for (const block of result.content ?? []) parts.push(describe(block, images));
  // A server SHOULD also send its structured content as text (MCP 2025-06-18 on): only without any text is it shown as JSON.
  if (result.structuredContent !== undefined && !(result.content ?? []).some((block) => block.type === 'text')) parts.push(JSON.stringify(result.structuredContent));
  const text = parts.join('\n').trim() || '(no output)';
  return {
    output: result.isError ? `Error: ${excerpt(text, maxChars - 7)}` : excerpt(text, maxChars),
    ...(result.isError ? { isError: true } : {}),
    ...(images.length > 0 ? { images } : {}),
  };
}

function describe(block: ContentBlock, images: Buffer[]): string {
  switch (block.type) {
    case 'text':
      return block.text;
    case 'image': {
      const bytes = Buffer.from(block.data, 'base64');
      const kept = images.length < MAX_IMAGES && bytes.length <= MAX_IMAGE_BYTES;
      if (kept) images.push(bytes);
      return `[image ${block.mimeType}, ${bytes.length} bytes${kept ? '' : ', not passed on'}]`;
    }
    case 'audio':
      return `[audio ${block.mimeType}, ${Buffer.byteLength(block.data, 'base64')} bytes, not passed on]`;
    case 'resource_link':
      return `[resource link: ${block.uri}${block.name ? ` (${block.name})` : ''}]`;
    case 'resource': {
      const resource = block.resource;
      if ('text' in resource && typeof resource.text === 'string') return `[resource ${resource.uri}]\n${resource.text}`;
      return `[resource ${resource.uri}${resource.mimeType ? `, ${resource.mimeType}` : ''}, binary, not passed on]`;
    }
    default:
      return `[${(block as { type: string }).type} content, not shown]`;
  }
}
