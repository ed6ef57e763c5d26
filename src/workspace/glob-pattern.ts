import picomatch from 'picomatch';

/**
 * An anchored RegExp for a glob over `/`-separated relative paths: picomatch's (`*`, `**`, `?`, `{a,b}`, `[jt]`
 * classes, extglobs), with `dot` so that `*` also matches dotfiles as the agent's earlier matcher did.
 */
export function globToRegExp(glob: string): RegExp {
  return picomatch.makeRe(glob, { dot: true });
}
