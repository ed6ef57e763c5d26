import { describe, expect, it } from '@jest/globals';
import { NODE_FLOOR, nodeVersionProblem } from '../../src/startup/node-version.js';

describe('the Node.js floor checked at start', () => {
  it.each(['20.19.0', '20.20.2', '22.0.0', 'v24.11.1'])('accepts %s', (version) => {
    expect(nodeVersionProblem(version)).toBeNull();
  });

  it.each(['20.18.3', '18.20.4', '20.9.0', '19.99.0'])('refuses %s, naming the floor', (version) => {
    expect(nodeVersionProblem(version)).toBe(`Node.js ${NODE_FLOOR} or later is required (this is ${version})`);
  });
});
