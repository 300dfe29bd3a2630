// The per-request chart (SVG bars): cache hit and miss tokens of each request, the running cost as a line.
import { clear, el, fmtCost, fmtInt, fmtTokens, svg } from './dom.js';

export function drawChart(container, requests) {
  clear(container);
  if (requests.length === 0) {
    container.append(el('p', { class: 'muted', text: 'No requests yet.' }));
    return;
  }
  const left = 44, right = 54, top = 12, bottom = 22, plotH = 150;
  const room = Math.max(320, (container.clientWidth || 320) - 4);
  const slot = Math.min(36, Math.max(6, (room - left - right) / requests.length));
  const gap = Math.max(2, Math.round(slot * 0.2)), barW = slot - gap;
  const width = Math.max(room, left + right + requests.length * slot);
  const height = top + plotH + bottom;
  const maxTokens = Math.max(1, ...requests.map((r) => r.hit + r.miss));
  const maxCost = Math.max(1e-9, requests[requests.length - 1].cumCost);
  const root = svg('svg', { width, height, viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': 'tokens and cost per request' });
  const end = left + requests.length * slot;
  root.append(svg('line', { x1: left, y1: top + plotH, x2: end, y2: top + plotH, stroke: '#d1d5db' }));
  root.append(svg('text', { class: 'axis', x: left - 4, y: top + 8, 'text-anchor': 'end', text: fmtTokens(maxTokens) }));
  root.append(svg('text', { class: 'axis', x: left - 4, y: top + plotH, 'text-anchor': 'end', text: '0' }));
  root.append(svg('text', { class: 'axis', x: end + 4, y: top + 8, fill: '#2563eb', text: fmtCost(maxCost) }));
  const points = [];
  requests.forEach((r, i) => {
    const x = left + gap / 2 + i * slot;
    const hitH = (r.hit / maxTokens) * plotH, missH = (r.miss / maxTokens) * plotH;
    const g = svg('g', { class: 'req' + (r.pro ? ' pro' : ''), 'data-hit': r.hit, 'data-miss': r.miss },
      svg('title', { text: `request ${i + 1} · ${r.session} · ${r.model}\ncache hit ${fmtInt(r.hit)} · miss ${fmtInt(r.miss)} tokens\n${fmtCost(r.cost)} (running ${fmtCost(r.cumCost)})` }),
      svg('rect', { class: 'bar-hit', x, y: top + plotH - hitH, width: barW, height: Math.max(0, hitH) }),
      svg('rect', { class: 'bar-miss', x, y: top + plotH - hitH - missH, width: barW, height: Math.max(0, missH) }));
    if (r.pro) g.append(svg('rect', { class: 'bar-pro', x, y: top + plotH - hitH - missH, width: barW, height: hitH + missH, fill: 'none' }));
    root.append(g);
    points.push(`${x + barW / 2},${top + plotH - (r.cumCost / maxCost) * plotH}`);
    if (slot >= 14 || (i + 1) % Math.ceil(14 / slot) === 0) {
      root.append(svg('text', { class: 'axis', x: x + barW / 2, y: top + plotH + 13, 'text-anchor': 'middle', text: String(i + 1) }));
    }
  });
  root.append(svg('polyline', { class: 'cost-line', points: points.join(' ') }));
  container.append(root);
  container.append(el('div', { class: 'chart-key' },
    el('span', {}, el('i', { class: 'key-hit' }), 'cache hit'),
    el('span', {}, el('i', { class: 'key-miss' }), 'cache miss'),
    el('span', {}, el('i', { class: 'key-cost' }), 'running cost'),
    el('span', {}, el('i', { class: 'key-pro' }), 'pro')));
}
