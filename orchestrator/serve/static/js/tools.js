// A tool call as the terminal shows it (orchestrator/ui/tool_lines.py): `▸ edit_file calc.py` and the edit as a
// unified diff, `▸ write_file calc.py (12 lines)` and the new file's first lines, `▸ bash <the command>`; then how it
// went, with the tail of its output as lines (a few, more on a failure). The events carry the arguments with each
// text bounded (`args_shown`) and the result's last lines (`tail`, of `lines` in all): what a bounded text no longer
// holds is not guessed.
import { clip, counted } from './dom.js';

export const OK_TAIL_LINES = 4;
export const ERROR_TAIL_LINES = 15;
export const DIFF_MAX_LINES = 40;
export const WRITE_HEAD_LINES = 12;
const INDENT = '    ';
const CONTEXT = 2;
const CUT = '\n…'; // how a bounded text ends (sessions.tool_batch.bounded_args)

const str = (args, key) => (args && typeof args[key] === 'string' ? args[key] : null);
const lineCount = (text) => text.split('\n').length - (text.endsWith('\n') ? 1 : 0);

function argsOf(e) {
  if (e.args_shown && typeof e.args_shown === 'object' && Object.keys(e.args_shown).length) return e.args_shown;
  try {
    const parsed = JSON.parse(e.args_preview || '');
    return parsed && typeof parsed === 'object' ? parsed : null;
  } catch (_) { return null; } // a preview cut at 160 characters
}

// old and new as difflib.unified_diff(n=2) shows them: -/+ rows, two lines of context, ⋯ between hunks
function diffRows(oldText, newText) {
  const a = oldText.split('\n').slice(0, 400), b = newText.split('\n').slice(0, 400);
  if (a[a.length - 1] === '' && b[b.length - 1] === '') { a.pop(); b.pop(); }
  const n = a.length, m = b.length;
  const lcs = Array.from({ length: n + 1 }, () => new Int32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--) lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  const ops = [];
  let i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) { ops.push([' ', a[i]]); i++; j++; }
    else if (j >= m || (i < n && lcs[i + 1][j] >= lcs[i][j + 1])) ops.push(['-', a[i++]]);
    else ops.push(['+', b[j++]]);
  }
  const changed = ops.map((op) => op[0] !== ' ');
  const near = (k) => { for (let d = -CONTEXT; d <= CONTEXT; d++) if (changed[k + d]) return true; return false; };
  const rows = [];
  let skipped = false;
  ops.forEach(([sign, line], k) => {
    if (!near(k)) { skipped = true; return; }
    if (skipped && rows.length) rows.push(['diff-gap', INDENT + '⋯']);
    skipped = false;
    rows.push([sign === '-' ? 'diff-del' : sign === '+' ? 'diff-add' : 'diff-ctx', INDENT + sign + line]);
  });
  return rows;
}

export function editDiff(args, maxLines = DIFF_MAX_LINES) {
  const rows = [];
  for (const edit of Array.isArray(args.edits) ? args.edits : []) {
    const oldText = str(edit, 'old'), newText = str(edit, 'new');
    if (oldText === null || newText === null) continue;
    const hunk = diffRows(oldText, newText);
    if (rows.length && hunk.length) rows.push(['diff-gap', INDENT + '⋯']);
    rows.push(...hunk);
  }
  if (rows.length <= maxLines) return rows;
  return [...rows.slice(0, maxLines), ['diff-gap', `${INDENT}… ${counted(rows.length - maxLines, 'more diff line')}`]];
}

function writeHead(content) {
  const cut = content.endsWith(CUT);
  const lines = (cut ? content.slice(0, -CUT.length) : content).split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  const rows = lines.slice(0, WRITE_HEAD_LINES).map((line) => ['diff-add', INDENT + '+' + line]);
  if (lines.length > WRITE_HEAD_LINES || cut) rows.push(['diff-gap', `${INDENT}… ${cut ? 'more lines' : counted(lines.length - WRITE_HEAD_LINES, 'more line')}`]);
  return rows;
}

// `{head, rows, what}`: the line a started call shows, the rows under it ([css class, text]), and the call in short
// (its first line, clipped) for the line that says how it went
export function toolStarted(e) {
  const shown = startedLines(e);
  return { ...shown, what: clip(shown.head.slice(2).split('\n')[0], 100) };
}

function startedLines(e) {
  const name = e.name || '?';
  const args = argsOf(e);
  if (!args) return { head: `▸ ${name} ${e.args_preview || ''}`.trimEnd(), rows: [] };
  const command = str(args, 'command'), path = str(args, 'path');
  if (name === 'bash' && command !== null) {
    const timeout = typeof args.timeout_s === 'number' ? ` (timeout ${args.timeout_s}s)` : '';
    return { head: `▸ bash ${command.replace(/\n+$/, '').replace(/\n/g, '\n' + INDENT)}${timeout}`, rows: [] };
  }
  if (name === 'edit_file' && path !== null) {
    const edits = Array.isArray(args.edits) ? args.edits.length : 0;
    return { head: `▸ edit_file ${path}${edits !== 1 ? ` (${counted(edits, 'edit')})` : ''}`, rows: editDiff(args) };
  }
  if (name === 'write_file' && path !== null) {
    const content = str(args, 'content') || '';
    const lines = content.endsWith(CUT) ? 'more than ' + counted(lineCount(content.slice(0, -CUT.length)), 'line') : counted(lineCount(content), 'line');
    return { head: `▸ write_file ${path} (${lines})`, rows: writeHead(content) };
  }
  if (name === 'read_file' && path !== null) {
    const start = args.start_line, end = args.end_line;
    const range = start !== undefined || end !== undefined ? `:${start || 1}-${end !== undefined ? end : ''}` : '';
    return { head: `▸ read_file ${path}${range}`, rows: [] };
  }
  const what = command !== null ? command : path !== null ? path : str(args, 'pattern');
  if (what !== null) return { head: `▸ ${name} ${what}`, rows: [] };
  // any other tool: its arguments in the order given, each value short, as the terminal's _generic shows them
  const value = (v) => (typeof v === 'string' ? JSON.stringify(clip(v, 40))
    : Array.isArray(v) ? `[${counted(v.length, 'item')}]`
      : v && typeof v === 'object' ? `{${counted(Object.keys(v).length, 'key')}}` : clip(JSON.stringify(v), 40));
  const parts = Object.entries(args).map(([k, v]) => `${k}=${value(v)}`);
  return { head: `▸ ${name} ${clip(parts.join(' '), 120)}`.trimEnd(), rows: [] };
}

const STATUS = /^\[(exit code -?\d+|killed by signal \d+|timed out after [^;\]]+)[^\]]*\]$/;

// `{head, ok, rows}`: how a call went (`what`: the call in short, from toolStarted), and the tail of its output
// (OK_TAIL_LINES lines, ERROR_TAIL_LINES on a failure)
export function toolFinished(e, what) {
  const name = e.name || '?';
  let lines = (e.tail !== undefined ? String(e.tail) : String(e.preview || '')).split('\n');
  let total = e.lines || lines.length;
  let status = null;
  if (name === 'bash' && lines.length && STATUS.test(lines[lines.length - 1])) {
    status = lines.pop().slice(1, -1);
    total -= 1;
  }
  if (lines.length === 1 && lines[0] === '') { lines = []; total = 0; }
  const keep = e.is_error ? ERROR_TAIL_LINES : OK_TAIL_LINES;
  const shown = lines.slice(-keep);
  const rows = [];
  if (total > shown.length) rows.push(['out more', `${INDENT}… ${counted(total - shown.length, 'earlier line')}`]);
  for (const line of shown) rows.push(['out', `${INDENT}│ ${line}`]);
  const head = `${e.is_error ? '✗' : '✓'} ${what || name} · ${e.is_error ? status || 'error' : 'ok'}`;
  return { head, ok: !e.is_error, rows };
}
