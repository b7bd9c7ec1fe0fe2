"""The `try` profile's pieces agree, and grantry accepts what the replicas are given.

Reads the resolved compose file (docker-compose config with deploy/try.env), checks it against
deploy/dex/config.yaml (issuer, grantry's login client and secret, its redirect URI, the MCP
audience), then runs `grantry migrate` with grantry-a's environment (the store swapped for a
SQLite file: there is no PostgreSQL service here) so grantry's own checks of every setting run.
"""

import os
import subprocess
import sys
import tempfile

import yaml  # PyYAML: docker-compose's own dependency

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def fail(message):
    print(f"try profile: {message}", file=sys.stderr)
    sys.exit(1)


def main(resolved_path):
    with open(resolved_path) as f:
        services = yaml.safe_load(f)["services"]
    with open(os.path.join(ROOT, "deploy/dex/config.yaml")) as f:
        dex = yaml.safe_load(f)
    if "dex" not in services or services["dex"].get("profiles") != ["try"]:
        fail("the dex service must be in the try profile only")
    if not services["dex"]["image"].split(":")[-1].startswith("v"):
        fail("pin Dex's image to a release")
    if services["balancer"]["command"][3] != "/etc/caddy/Caddyfile.try":
        fail("the balancer must serve Caddyfile.try (Dex under /dex)")
    clients = {c["id"]: c for c in dex["staticClients"]}
    for name in ("grantry-a", "grantry-b"):
        env = services[name]["environment"]
        public = env["GRANTRY_PUBLIC_URL"]
        if env["GRANTRY_OIDC_ISSUER"] != dex["issuer"]:
            fail(f"{name}'s issuer {env['GRANTRY_OIDC_ISSUER']} is not Dex's {dex['issuer']}")
        login = clients.get(env["GRANTRY_OIDC_CLIENT_ID"])
        if login is None or login["secret"] != env["GRANTRY_OIDC_CLIENT_SECRET"]:
            fail(f"{name}'s login client is not one Dex knows, with its secret")
        if f"{public}/login/callback" not in login["redirectURIs"]:
            fail(f"Dex does not allow {public}/login/callback for grantry's login")
        audience = clients.get(f"{public}/mcp")
        if audience is None:
            fail(f"Dex has no audience client for {public}/mcp")
        token_client(dex, clients, audience)
    accepted_by_grantry(services["grantry-a"]["environment"])
    print("try profile: dex, balancer and replicas agree; grantry accepts the settings")


def token_client(dex, clients, audience):
    """What docs/deployment.md's token request needs of Dex: `mcp-client` with its secret,
    trusted by the audience, and the password grant checked by the local users."""
    client = clients.get("mcp-client")
    if client is None or client.get("secret") != "try-mcp-client-secret":
        fail("Dex has no mcp-client with the secret docs/deployment.md uses")
    if "mcp-client" not in audience.get("trustedPeers", []):
        fail("the MCP audience does not trust mcp-client: its tokens could not name it")
    oauth2 = dex.get("oauth2", {})
    if "password" not in oauth2.get("grantTypes", []) or oauth2.get("passwordConnector") != "local":
        fail("Dex's password grant is off: the documented token request would be refused")
    users = [u["email"] for u in dex.get("staticPasswords", [])]
    if "alice@example.com" not in users:
        fail("Dex has no alice@example.com")


def accepted_by_grantry(environment):
    with tempfile.TemporaryDirectory() as data_dir:
        env = {k: str(v) for k, v in environment.items()}
        env.update(
            PATH=os.environ["PATH"],
            GRANTRY_STORE=f"sqlite://{data_dir}/grantry.db",
            GRANTRY_DATA_DIR=data_dir,
            GRANTRY_PROVIDERS=os.path.join(ROOT, "deploy/providers.toml"),
        )
        done = subprocess.run(
            [os.environ["GRANTRY_BIN"], "migrate"], env=env, capture_output=True, text=True
        )
        if done.returncode != 0:
            fail(f"grantry refused grantry-a's settings: {done.stderr.strip()}")


if __name__ == "__main__":
    main(sys.argv[1])
