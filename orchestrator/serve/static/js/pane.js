// The live text of one session or step: its reasoning and content as they stream, and its tool lines.
import { el } from './dom.js';

const PANE_CHARS = 40000;

export class Pane {
  constructor(title, key) {
    this.key = key;
    this.model = el('span', { class: 'model' });
    this.body = el('div', { class: 'body' });
    this.pre = el('pre', {});
    this.body.append(this.pre);
    this.root = el('section', { class: 'stream', 'data-pane': key }, el('header', {}, el('span', { text: title }), this.model), this.body);
    this.segment = null;
    this.segmentKind = null;
    this.chars = 0;
  }
  setModel(model) { this.model.textContent = model || ''; }
  setActive(active) { this.root.classList.toggle('active', !!active); }
  append(kind, text) {
    if (!text) return;
    const stick = this.atBottom();
    if (this.segmentKind !== kind || !this.segment) {
      const span = el('span', { class: kind });
      this.segment = document.createTextNode('');
      span.append(this.segment);
      this.pre.append(span);
      this.segmentKind = kind;
    }
    this.segment.appendData(text);
    this.grow(text.length, stick);
  }
  breakSegment() {
    if (this.segment && this.segment.length > 0 && !/\n$/.test(this.segment.data)) this.segment.appendData('\n');
    this.segment = null;
    this.segmentKind = null;
  }
  line(kind, text) {
    const stick = this.atBottom();
    const prefix = this.pre.lastChild && this.segmentKind ? '\n' : '';
    this.pre.append(el('span', { class: kind, text: prefix + text + '\n' }));
    this.segment = null;
    this.segmentKind = null;
    this.grow(text.length + 1, stick);
  }
  // a line and the rows under it ([css class, text]): a tool call's diff or its output's tail
  block(kind, head, rows) {
    this.line(kind, head);
    for (const [cls, text] of rows) this.line(cls, text);
  }
  grow(n, stick) {
    this.chars += n;
    while (this.chars > PANE_CHARS && this.pre.firstChild) {
      this.chars -= (this.pre.firstChild.textContent || '').length;
      this.pre.removeChild(this.pre.firstChild);
    }
    if (stick) this.body.scrollTop = this.body.scrollHeight;
  }
  atBottom() { return this.body.scrollHeight - this.body.scrollTop - this.body.clientHeight < 30; }
}

