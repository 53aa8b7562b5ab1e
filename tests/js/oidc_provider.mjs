// A real OpenID provider (the certified `oidc-provider` package) for
// tests/dashboard/test_sso.py, on 127.0.0.1 at a free port. It prints one line,
// `OIDC provider listening on http://127.0.0.1:PORT`, and serves until its standard
// input closes (so it never outlives the test that started it).
//
// Its login page is the package's own development interactions (any login name of
// ACCOUNTS; consent is granted at once, as a first-party client's). Each account has
// an email and a `groups` claim, put in the ID token.
//
// The test steers it under /_test/ (this server's own routes, beside the provider's):
//   POST /_test/setup    {"redirect_uris": [...], "post_logout_redirect_uris": [...]}
//                        registers the client once Sounding's address is known;
//   POST /_test/account  {"id": ..., "groups": [...]} changes an account's groups;
//   POST /_test/rotate   signs with a new key from now on (the old one stays in the
//                        JWKS, as providers publish both while they rotate);
//   POST /_test/mangle   {"mode": ...} changes the ID token of the next token response:
//                        "tamper" edits its payload (the email) without signing it again; "aud",
//                        "iss", "nonce", "expired" and "kid" sign it again with the
//                        provider's current key after setting another audience, issuer
//                        or nonce, an `exp` an hour ago (`iat` two), or a `kid` the
//                        JWKS does not have;
//   GET  /_test/stats    {"jwks": requests for the JWKS so far}.
import { createServer } from 'node:http';
import { generateKeyPairSync, createPrivateKey, randomBytes, sign } from 'node:crypto';
import Provider from 'oidc-provider';

const CLIENT_ID = 'sounding';
const CLIENT_SECRET = 'a client secret of the test provider';
const ACCOUNTS = {
  ana: { email: 'ana@example.com', groups: ['sounding-admins'] },
  bo: { email: 'bo@example.com', groups: ['staff'] },
  cy: { email: 'cy@example.com', groups: ['sounding-viewers'] },
  dee: { email: 'dee@example.com', groups: [], },
  eve: { email: 'eve@example.com', groups: ['sounding-viewers'], email_verified: false },
  // Roles in single projects (tests/dashboard/test_project_roles.py).
  fay: { email: 'fay@example.com', groups: ['acme-devs'] },
  gus: { email: 'gus@example.com', groups: ['acme-devs', 'sounding-viewers'] },
};
const COOKIE_KEYS = [randomBytes(32).toString('hex')];

function newKey() {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { ...privateKey.export({ format: 'jwk' }), kid: randomBytes(8).toString('hex'), use: 'sig', alg: 'RS256' };
}

let keys = [newKey()];
let client = { redirect_uris: ['http://127.0.0.1/unset'], post_logout_redirect_uris: [] };
let mangle = null;
let jwksRequests = 0;
let issuer;
let handle;

function rebuild() {
  handle = build().callback();
}

const b64url = (data) => Buffer.from(data).toString('base64url');

function resign(idToken, edit) {
  const [header, payload] = idToken.split('.').slice(0, 2)
    .map((part) => JSON.parse(Buffer.from(part, 'base64url')));
  const key = keys[0];
  const newHeader = { ...header, kid: key.kid };
  edit(newHeader, payload);
  const input = `${b64url(JSON.stringify(newHeader))}.${b64url(JSON.stringify(payload))}`;
  const signature = sign('sha256', Buffer.from(input), createPrivateKey({ key, format: 'jwk' }));
  return `${input}.${b64url(signature)}`;
}

function mangled(idToken, mode) {
  const now = Math.floor(Date.now() / 1000);
  switch (mode) {
    case 'tamper': {
      const [header, payload, signature] = idToken.split('.');
      const claims = JSON.parse(Buffer.from(payload, 'base64url'));
      claims.email = 'mallory@example.com';
      return `${header}.${b64url(JSON.stringify(claims))}.${signature}`;
    }
    case 'aud':
      return resign(idToken, (h, p) => { p.aud = 'another-client'; });
    case 'iss':
      return resign(idToken, (h, p) => { p.iss = 'https://another-issuer.example.com'; });
    case 'nonce':
      return resign(idToken, (h, p) => { p.nonce = 'the nonce of another login'; });
    case 'expired':
      return resign(idToken, (h, p) => { p.iat = now - 7200; p.exp = now - 3600; });
    case 'kid':
      return resign(idToken, (h) => { h.kid = 'a-key-nobody-published'; });
    default:
      throw new Error(`unknown mangle mode ${mode}`);
  }
}

function build() {
  const built = new Provider(issuer, {
    clients: [{
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
      redirect_uris: client.redirect_uris,
      post_logout_redirect_uris: client.post_logout_redirect_uris,
      grant_types: ['authorization_code'],
      response_types: ['code'],
    }],
    jwks: { keys },
    cookies: { keys: COOKIE_KEYS },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], groups: ['groups'] },
    // The scopes' claims in the ID token itself, as Keycloak and Dex put them.
    conformIdTokenClaims: false,
    pkce: { required: () => true },
    features: { devInteractions: { enabled: true }, rpInitiatedLogout: { enabled: true } },
    async findAccount(ctx, id) {
      const account = ACCOUNTS[id];
      if (!account) return undefined;
      return {
        accountId: id,
        async claims() {
          return {
            sub: id, email: account.email, email_verified: account.email_verified ?? true,
            groups: account.groups,
          };
        },
      };
    },
    // A first-party client: consent is given at once, for whatever it asks.
    async loadExistingGrant(ctx) {
      const grant = new ctx.oidc.provider.Grant({
        clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId,
      });
      grant.addOIDCScope(ctx.oidc.params.scope || 'openid');
      await grant.save();
      return grant;
    },
  });
  built.use(async (ctx, next) => {
    await next();
    if (ctx.path === '/token' && mangle && ctx.body && ctx.body.id_token) {
      ctx.body = { ...ctx.body, id_token: mangled(ctx.body.id_token, mangle) };
      mangle = null;
    }
  });
  return built;
}

async function readJson(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return chunks.length ? JSON.parse(Buffer.concat(chunks).toString()) : {};
}

async function control(req, res) {
  const body = req.method === 'POST' ? await readJson(req) : {};
  switch (req.url) {
    case '/_test/setup':
      client = { redirect_uris: body.redirect_uris, post_logout_redirect_uris: body.post_logout_redirect_uris || [] };
      rebuild();
      break;
    case '/_test/account':
      ACCOUNTS[body.id].groups = body.groups;
      break;
    case '/_test/rotate':
      keys = [newKey(), ...keys];
      rebuild();
      break;
    case '/_test/mangle':
      mangle = body.mode;
      break;
    case '/_test/stats':
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify({ jwks: jwksRequests }));
      return;
    default:
      res.statusCode = 404;
  }
  res.end();
}

const server = createServer((req, res) => {
  if (req.url.startsWith('/_test/')) {
    control(req, res).catch((error) => { res.statusCode = 500; res.end(String(error)); });
    return;
  }
  if (req.url.startsWith('/jwks')) jwksRequests += 1;
  handle(req, res);
});

server.listen(0, '127.0.0.1', () => {
  issuer = `http://127.0.0.1:${server.address().port}`;
  rebuild();
  console.log(`OIDC provider listening on ${issuer}`);
});
process.stdin.on('end', () => {
  server.closeAllConnections();
  process.exit(0);
});
process.stdin.resume();
