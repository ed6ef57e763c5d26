import { describe, expect, it } from '@jest/globals';
import { deliverablesOf, downloadPath } from '../../src/admin/task-deliverables.js';

const SESSION = '11111111-2222-4333-8444-555555555555';

/** Which files a Task changed, and how, is its read model's (task_file_changes; test/medium/task-file-changes.spec.ts). */
describe('the deliverables of a Task (GET /admin/tasks/:id), from its read model’s files', () => {
  it('keeps the order, the first change and the last size, and adds the resource URI, the type and the download', () => {
    const files = [
      { path: 'b.md', change: 'modified' as const, bytes: 3 },
      { path: 'docs/a b#.txt', change: 'created' as const, bytes: 9 },
      { path: 'x.js', change: 'restored' as const, bytes: null },
    ];
    expect(deliverablesOf(SESSION, files)).toEqual([
      {
        path: 'b.md',
        change: 'modified',
        bytes: 3,
        uri: `agent-session://${SESSION}/files/b.md`,
        mime_type: 'text/markdown',
        download_path: `/admin/sessions/${SESSION}/files/b.md`,
      },
      {
        path: 'docs/a b#.txt',
        change: 'created',
        bytes: 9,
        uri: `agent-session://${SESSION}/files/docs/a%20b%23.txt`,
        mime_type: 'text/plain',
        download_path: `/admin/sessions/${SESSION}/files/docs/a%20b%23.txt`,
      },
      {
        path: 'x.js',
        change: 'restored',
        bytes: null,
        uri: `agent-session://${SESSION}/files/x.js`,
        mime_type: 'text/javascript',
        download_path: `/admin/sessions/${SESSION}/files/x.js`,
      },
    ]);
  });

  it('has none for a Task that changed no file', () => {
    expect(deliverablesOf(SESSION, [])).toEqual([]);
  });

  it('encodes each path segment of the download, keeping the slashes', () => {
    expect(downloadPath(SESSION, 'a/ü?/c')).toBe(`/admin/sessions/${SESSION}/files/a/%C3%BC%3F/c`);
  });
});
