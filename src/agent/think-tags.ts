/**
 * Separates `<think>…</think>` reasoning that reached `content`: deepseek-r1 and qwen3 templates before
 * Ollama v0.9.0, `think: false` leaks (ollama-python#529), and an unclosed block when the answer was cut
 * off inside it. The reasoning is kept for the model's history, never for the user.
 */
export function splitThinking(content: string): { answer: string; thinking: string } {
  const thoughts: string[] = [];
  let answer = content.replace(/<think>([\s\S]*?)(?:<\/think>|$)/g, (_, thought: string) => {
    thoughts.push(thought.trim());
    return '';
  });
  // Some templates open the block in the prompt, so only the closing tag reaches the answer.
  const orphan = answer.indexOf('</think>');
  if (orphan >= 0) {
    thoughts.push(answer.slice(0, orphan).trim());
    answer = answer.slice(orphan + '</think>'.length);
  }
  // Not trimmed: the parts of a continued answer join with the spacing the model gave them.
  return { answer: thoughts.length > 0 ? answer.replace(/^\s+/, '') : answer, thinking: thoughts.filter(Boolean).join('\n\n') };
}
