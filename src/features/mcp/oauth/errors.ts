/**
 * OAuth error answers (RFC 6749 §5.2, RFC 7009, RFC 7591 §3.2.2, RFC 8707): a JSON body
 * `{error, error_description}` with a registered error code, never a 500 for bad input, and never
 * cached. Every refusal is logged by code (never with the request's values).
 */
import 'server-only';
import { logRefusal } from '@/server/log';
import { corsHeaders } from './http';

const OAUTH_ERRORS = [
  'invalid_request',
  'invalid_client',
  'invalid_grant',
  'unauthorized_client',
  'unsupported_grant_type',
  'invalid_scope',
  'invalid_target',
  'unsupported_token_type',
  'invalid_redirect_uri',
  'invalid_client_metadata',
  'access_denied',
  'unsupported_response_type',
  'server_error',
  'temporarily_unavailable',
  'slow_down',
] as const;
export type OAuthErrorCode = (typeof OAUTH_ERRORS)[number];

/** An expected refusal of an OAuth request: becomes an error answer, never a 500. */
export class OAuthError extends Error {
  constructor(
    readonly error: OAuthErrorCode,
    readonly description: string,
    readonly status = error === 'invalid_client' ? 401 : 400,
  ) {
    super(description);
  }
}

export function oauthErrorResponse(req: Request, err: OAuthError, headers: Record<string, string> = {}): Response {
  logRefusal(req, err.status, err.error, { endpoint: 'oauth' });
  return Response.json(
    { error: err.error, error_description: err.description },
    {
      status: err.status,
      headers: { 'cache-control': 'no-store', pragma: 'no-cache', ...corsHeaders(), ...headers },
    },
  );
}
