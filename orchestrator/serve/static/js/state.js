// What the modules of the page share: the run shown now, and the runs and workspaces the service listed last.
export const app = {
  view: null, // the RunView of the run shown, or null
  runs: [],
  workspaces: [], // the workspaces the service was started with (`reasonix serve --workspace`)
  runsTimer: null,
};
export const TERMINAL = new Set(['complete', 'blocked', 'paused', 'failed', 'cancelled']);
