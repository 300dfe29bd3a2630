// Small helpers every module of the page uses: elements built from text (never parsed as markup) and the formats of
// costs, ratios, durations and counts.
export const $ = (id) => document.getElementById(id);
const SVG_NS = 'http://www.w3.org/2000/svg';

function setAttrs(node, attrs) {
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'text') node.textContent = String(value);
    else node.setAttribute(key, value === true ? '' : String(value));
  }
}
function build(node, attrs, children) {
  setAttrs(node, attrs);
  for (const child of children) node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  return node;
}
export function el(tag, attrs, ...children) { return build(document.createElement(tag), attrs, children); }
export function svg(tag, attrs, ...children) { return build(document.createElementNS(SVG_NS, tag), attrs, children); }
export function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }

export function fmtCost(usd) {
  if (usd === null || usd === undefined) return '–';
  return '$' + Number(usd).toFixed(usd >= 10 ? 2 : 4);
}
export function fmtRatio(ratio) {
  return ratio === null || ratio === undefined ? '–' : (ratio * 100).toFixed(1) + '%';
}
export function fmtDuration(seconds) {
  if (seconds === null || seconds === undefined) return '–';
  const s = Math.max(0, Number(seconds));
  if (s < 60) return s.toFixed(1) + ' s';
  const m = Math.floor(s / 60);
  if (m < 60) return m + ' min ' + Math.round(s - m * 60) + ' s';
  return Math.floor(m / 60) + ' h ' + (m % 60) + ' min';
}
export function fmtInt(n) { return Number(n || 0).toLocaleString('en-US'); }
export function fmtTokens(n) { return n >= 10000 ? Math.round(n / 1000) + 'k' : fmtInt(n); }
export function counted(n, noun) { return `${n} ${n === 1 ? noun : noun + 's'}`; }
export function clip(text, max) {
  const s = String(text ?? '');
  return s.length > max ? s.slice(0, max - 1) + '…' : s;
}
export function verifyText(v) {
  const extras = [];
  if (v.expect_exit !== undefined && v.expect_exit !== 0) extras.push(`exit ${v.expect_exit}`);
  if (v.timeout_s !== undefined && v.timeout_s !== null) extras.push(`${v.timeout_s}s`);
  return v.command + (extras.length ? ` (${extras.join(', ')})` : '');
}
