/**
 * Fits text into `maxChars` for the model: the head and the tail are kept and the middle is replaced
 * by a marker saying how much was left out, so the model knows the output was truncated.
 */
export function excerpt(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const marker = (omitted: number) => `\n… [${omitted} characters omitted] …\n`;
  const budget = maxChars - marker(text.length).length;
  const head = Math.ceil(budget / 2);
  const tail = Math.floor(budget / 2);
  return `${text.slice(0, head)}${marker(text.length - head - tail)}${text.slice(text.length - tail)}`;
}
