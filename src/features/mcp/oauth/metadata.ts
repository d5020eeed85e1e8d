/**
 * The discovery documents: RFC 9728 protected resource metadata of the MCP endpoint and RFC 8414
 * authorization server metadata, both built from the configured public URL.
 */
import 'server-only';
import { KEY_SCOPES } from '../key-scopes';
import { TOKEN_AUTH_METHODS } from './clients';
import type { OAuthSite } from './config';

export function protectedResourceMetadata(site: OAuthSite) {
  return {
    resource: site.resource,
    authorization_servers: [site.issuer],
    scopes_supported: [...KEY_SCOPES],
    bearer_methods_supported: ['header'],
    resource_name: 'Tracker MCP server',
  };
}

export function authorizationServerMetadata(site: OAuthSite) {
  return {
    issuer: site.issuer,
    authorization_endpoint: site.authorizationEndpoint,
    token_endpoint: site.tokenEndpoint,
    registration_endpoint: site.registrationEndpoint,
    revocation_endpoint: site.revocationEndpoint,
    scopes_supported: [...KEY_SCOPES],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: [...TOKEN_AUTH_METHODS],
    revocation_endpoint_auth_methods_supported: [...TOKEN_AUTH_METHODS],
    authorization_response_iss_parameter_supported: true,
    client_id_metadata_document_supported: true,
  };
}
