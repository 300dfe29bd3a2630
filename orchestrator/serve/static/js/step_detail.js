// One step in full, as the terminal's review shows it: what it will do, how it is accepted and verified.
import { $, clear, el, verifyText } from './dom.js';

export function showStep(step, status, onClose) {
  const box = $('step-detail');
  clear(box);
  if (!step) { box.hidden = true; return; }
  const rows = [
    ['after', (step.depends_on || []).join(', ')],
    ['reads', (step.reads || []).join(', ')],
    ['writes', (step.writes || []).join(', ')],
    ['risk', step.risk && step.risk !== 'low' ? step.risk : ''],
    ['result', step.result || ''],
  ];
  box.append(
    el('h4', {}, el('span', { class: 'mono', text: step.id }), ` ${step.title || ''} `, el('span', { class: `st st-${status}`, text: status }),
      el('button', { type: 'button', class: 'close', id: 'step-close', text: 'Close' })),
    el('p', { class: 'instructions', text: step.instructions || '' }));
  const dl = el('dl', {});
  for (const [name, value] of rows) if (value) dl.append(el('dt', { text: name }), el('dd', { text: value }));
  box.append(dl);
  if ((step.acceptance || []).length) box.append(el('h5', { text: 'acceptance' }), el('ul', {}, ...step.acceptance.map((a) => el('li', { text: a }))));
  if ((step.verify || []).length) {
    box.append(el('h5', { text: 'verify' }), el('ul', { class: 'mono' }, ...step.verify.map((v) => el('li', { text: verifyText(v) }))));
  }
  box.hidden = false;
  $('step-close').addEventListener('click', () => { box.hidden = true; onClose(); });
}
