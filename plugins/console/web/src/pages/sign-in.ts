import { ApiFailure, consoleApi, currentSession, loadSession, setSession, type Session } from '../api.ts';
import { busy, field, h, notice } from '../dom.ts';
import { lockMinutes } from '../format.ts';
import { t } from '../i18n.ts';
import { navigate, returnAddress, type Route } from '../router.ts';

/** Signing in with the platform's users: same passwords, lockout and CSRF protection as the OAuth sign-in. */

export function signInMessage(err: unknown): string {
  if (!(err instanceof ApiFailure)) return t('common.error', { message: (err as Error).message });
  switch (err.code) {
    case 'SIGN_IN_FAILED':
      return t('signin.failed');
    case 'SIGN_IN_LOCKED':
      return t('signin.locked', { minutes: lockMinutes(err.retryAfterSeconds) });
    case 'SIGN_IN_RATE_LIMITED':
      return t('signin.limited', { seconds: err.retryAfterSeconds ?? 60 });
    case 'CSRF_FAILED':
      return t('signin.csrf');
    case 'VALIDATION_FAILED':
      return t('signin.missing');
    default:
      return err.message;
  }
}

export async function render(root: HTMLElement, route: Route): Promise<void> {
  if (!currentSession().csrf) await loadSession();
  const email = h('input', { type: 'email', name: 'email', autocomplete: 'username', required: true, maxlength: 254 });
  const password = h('input', { type: 'password', name: 'password', autocomplete: 'current-password', required: true, maxlength: 200 });
  const submit = h('button', { type: 'submit' }, t('signin.submit'));
  const message = h('div', { class: 'form-message' });
  const form = h('form', { class: 'card narrow', novalidate: true },
    field(t('signin.email'), email),
    field(t('signin.password'), password),
    message,
    submit);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    message.replaceChildren();
    if (!email.value.trim() || !password.value) {
      message.append(notice('error', t('signin.missing')));
      (email.value.trim() ? password : email).focus();
      return;
    }
    void busy(submit, async () => {
      try {
        const session = await consoleApi<Session>('/sign-in', { method: 'POST', json: { email: email.value, password: password.value } });
        setSession(session);
        navigate(returnAddress(route) ?? 'keys', true);
      } catch (err) {
        // A refused form may have been stale: the next try gets a fresh CSRF token.
        await loadSession().catch(() => undefined);
        password.value = '';
        message.append(notice('error', signInMessage(err)));
        password.focus();
      }
    });
  });
  root.append(h('h1', { tabindex: -1 }, t('signin.title')), h('p', { class: 'lead' }, t('signin.intro')), form);
}
