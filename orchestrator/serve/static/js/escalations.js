// The escalations of a run: each turn that went to pro, why, what the aborted flash call cost and what the pro
// requests cost since.
import { $, clear, el, fmtCost } from './dom.js';

export class Escalations {
  constructor() {
    this.entries = [];
    clear($('escalations'));
    $('escalations').append(el('li', { class: 'muted', text: 'none' }));
  }

  add(e, currentStep) {
    const list = $('escalations');
    if (this.entries.length === 0) clear(list);
    for (const x of this.entries) if (x.session === e.session) x.open = false;
    const item = el('li', { class: 'esc' });
    const step = e.step_id || (e.session === 'executor' ? currentStep : null);
    const entry = {
      session: e.session, to: e.to_model, open: true, proCost: 0,
      render: () => {
        clear(item);
        item.append(
          el('div', { class: 'what', text: `${e.session}: ${e.from_model} → ${e.to_model} (${e.trigger})${step ? ' on ' + step : ''}` }),
          el('div', { class: 'reason', text: `reason: ${e.reason || '(none given)'}` }),
          el('div', { class: 'muted', text: `aborted flash call ${fmtCost(e.flash_cost_usd)}${e.flash_cost_estimated ? ' (estimated)' : ''} · ${e.to_model} requests so far ${fmtCost(entry.proCost)}` }));
      },
    };
    entry.render();
    this.entries.push(entry);
    list.append(item);
  }

  // a request's cost counts toward the open escalation of its session to its model
  usage(e) {
    const esc = this.entries.find((x) => x.session === e.session && x.to === e.model && x.open);
    if (esc) { esc.proCost += e.cost_usd || 0; esc.render(); }
  }
}
