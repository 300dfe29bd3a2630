// The plan as a layered DAG in SVG: each step a node coloured by its status, its dependencies as arrows.
import { clear, clip, counted, el, svg } from './dom.js';

const NODE_W = 180, NODE_H = 60, GAP_X = 38, GAP_Y = 14, PAD = 10, MAX_NODES = 400;

function layoutPlan(steps) {
  const byId = new Map(steps.map((s) => [s.id, s]));
  const depth = new Map();
  const visiting = new Set();
  const depthOf = (id) => {
    if (depth.has(id)) return depth.get(id);
    if (visiting.has(id)) return 0; // a cycle (an invalid plan): draw it anyway
    visiting.add(id);
    let d = 0;
    for (const dep of byId.get(id).depends_on || []) if (byId.has(dep)) d = Math.max(d, depthOf(dep) + 1);
    visiting.delete(id);
    depth.set(id, d);
    return d;
  };
  const columns = [];
  for (const s of steps) (columns[depthOf(s.id)] ||= []).push(s.id);
  const row = new Map();
  columns.forEach((col, c) => {
    if (c > 0) { // order by the mean row of the dependencies: fewer crossing edges
      const key = (id) => {
        const deps = (byId.get(id).depends_on || []).filter((d) => row.has(d));
        return deps.length ? deps.reduce((a, d) => a + row.get(d), 0) / deps.length : 0;
      };
      col.sort((a, b) => key(a) - key(b));
    }
    col.forEach((id, r) => row.set(id, r));
  });
  const pos = new Map();
  for (const [id, d] of depth) pos.set(id, { x: PAD + d * (NODE_W + GAP_X), y: PAD + row.get(id) * (NODE_H + GAP_Y) });
  const rows = Math.max(1, ...columns.map((c) => (c ? c.length : 0)));
  return { pos, width: 2 * PAD + columns.length * (NODE_W + GAP_X) - GAP_X, height: 2 * PAD + rows * (NODE_H + GAP_Y) - GAP_Y };
}

// the title in at most `lines` lines of `width` characters, broken at spaces where it can be, the last one clipped
function wrapTitle(title, width, lines) {
  const out = [];
  let rest = String(title).trim();
  while (rest && out.length < lines) {
    if (out.length === lines - 1 || rest.length <= width) { out.push(clip(rest, width)); break; }
    let cut = rest.lastIndexOf(' ', width);
    if (cut < width / 2) cut = width;
    out.push(rest.slice(0, cut).trimEnd());
    rest = rest.slice(cut).trimStart();
  }
  return out;
}

export function drawPlan(container, plan, statuses, live, onStep) {
  clear(container);
  if (!plan || !Array.isArray(plan.steps) || plan.steps.length === 0) {
    const text = live ? 'No plan yet: the planner is working.' : 'No plan: the run ended before the planner submitted one.';
    container.append(el('p', { class: 'muted', text }));
    return;
  }
  const steps = plan.steps.slice(0, MAX_NODES);
  const { pos, width, height } = layoutPlan(steps);
  const root = svg('svg', { width, height, viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': 'plan graph' });
  for (const s of steps) {
    const to = pos.get(s.id);
    for (const dep of s.depends_on || []) {
      const from = pos.get(dep);
      if (!from) continue;
      const x1 = from.x + NODE_W, y1 = from.y + NODE_H / 2, x2 = to.x, y2 = to.y + NODE_H / 2, mx = (x1 + x2) / 2;
      root.append(svg('path', { class: 'edge', d: `M${x1},${y1} C${mx},${y1} ${mx},${y2} ${x2 - 4},${y2}`, 'marker-end': 'url(#arrow)' }));
    }
  }
  const defs = svg('defs', {}, svg('marker', { id: 'arrow', viewBox: '0 0 8 8', refX: 4, refY: 4, markerWidth: 7, markerHeight: 7, orient: 'auto' },
    svg('path', { d: 'M0,0 L8,4 L0,8 z', fill: '#9ca3af' })));
  root.prepend(defs);
  for (const s of steps) {
    const p = pos.get(s.id);
    const status = statuses.get(s.id) || s.status || 'pending';
    const g = svg('g', { class: `node st-${status}`, 'data-step': s.id, 'data-status': status, transform: `translate(${p.x},${p.y})` },
      svg('title', { text: `${s.id} · ${s.title || ''}\n${status}` }),
      svg('rect', { width: NODE_W, height: NODE_H, rx: 6 }),
      svg('text', { class: 'sid', x: 8, y: 15, text: clip(s.id, 14) }),
      svg('text', { class: 'status', x: NODE_W - 8, y: 15, 'text-anchor': 'end', text: status }));
    wrapTitle(s.title || '', 27, 2).forEach((line, i) => g.append(svg('text', { class: 'title', x: 8, y: 34 + i * 15, text: line })));
    if (onStep) {
      g.setAttribute('tabindex', '0');
      g.setAttribute('role', 'button');
      g.addEventListener('click', () => onStep(s.id));
      g.addEventListener('keydown', (ev) => { if (ev.key === 'Enter' || ev.key === ' ') { ev.preventDefault(); onStep(s.id); } });
    }
    root.append(g);
  }
  container.append(root);
  if (plan.steps.length > MAX_NODES) {
    container.append(el('p', { class: 'muted', text: `The plan has ${counted(plan.steps.length, 'step')}; the graph shows the first ${MAX_NODES}.` }));
  }
}

