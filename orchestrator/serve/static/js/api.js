// The access token (see docs/serve-api.md), the JSON API and the error box.
import { $ } from './dom.js';

const TOKEN_KEY = 'reasonix-serve-token';
export const NEEDS_TOKEN =
  'This page needs the link with the token that `reasonix serve` printed ' +
  '(http://…/?token=…). Open that link again; the token is not kept after this tab closes.';

function takeToken() {
  const params = new URLSearchParams(location.search);
  let token = params.get('token');
  if (token) {
    try { sessionStorage.setItem(TOKEN_KEY, token); } catch (_) { /* storage disabled: memory only */ }
    params.delete('token');
    const query = params.toString();
    history.replaceState(history.state, '', location.pathname + (query ? '?' + query : '') + location.hash);
  } else {
    try { token = sessionStorage.getItem(TOKEN_KEY); } catch (_) { token = null; }
  }
  return token || '';
}
export const TOKEN = takeToken();

// ------------------------------------------------------------------ errors shown to the user
let errorKind = null;
export function shownErrorKind() { return errorKind; }
export function showError(message, hint, kind) {
  errorKind = kind || 'other';
  const box = $('error');
  box.textContent = hint ? message + '\n' + hint : message;
  box.hidden = false;
}
export function clearError() { errorKind = null; $('error').hidden = true; $('error').textContent = ''; }

export class ApiError extends Error {
  constructor(status, message, hint) { super(message); this.status = status; this.hint = hint || ''; }
}

export async function api(path, options) {
  const opts = options || {};
  const headers = { Accept: 'application/json' };
  if (TOKEN) headers.Authorization = 'Bearer ' + TOKEN;
  let body;
  if (opts.body !== undefined) { headers['Content-Type'] = 'application/json'; body = JSON.stringify(opts.body); }
  let response;
  try {
    response = await fetch(path, { method: opts.method || 'GET', headers, body, cache: 'no-store' });
  } catch (err) {
    throw new ApiError(0, 'The service does not answer: is `reasonix serve` still running?', String(err));
  }
  let data = null;
  try { data = await response.json(); } catch (_) { data = null; }
  if (!response.ok) {
    if (response.status === 401) throw new ApiError(401, NEEDS_TOKEN, (data && data.error) || '');
    const message = (data && data.error) || `${opts.method || 'GET'} ${path} failed with HTTP ${response.status}`;
    throw new ApiError(response.status, message, (data && data.hint) || '');
  }
  return data;
}

export function reportError(err) {
  if (err instanceof ApiError) showError(err.message, err.hint, err.status === 0 ? 'network' : err.status === 401 ? 'token' : 'api');
  else showError(String(err && err.message ? err.message : err));
}
