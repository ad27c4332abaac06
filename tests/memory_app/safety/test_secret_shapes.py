"""Credential shapes by kind: what is refused, and what reads alike but is not a secret.

Every value is generated at run time from a fixed seed (letters and digits
of the right shape, no real key); the text around it is ours.
"""

import base64
import random
import string

import pytest

from memory_app.safety import scan_fields
from memory_app.safety.registry import family_of

_RNG = random.Random(20261201)
_BASE36 = string.ascii_lowercase + string.digits


def generated(length: int, alphabet: str = string.ascii_letters + string.digits) -> str:
    """Random characters, then a letter-digit tail, so the value mixes both."""
    body = "".join(_RNG.choice(alphabet) for _ in range(length - 4))
    letters = [c for c in alphabet if c.isalpha()]
    return body + _RNG.choice(letters) + "7" + _RNG.choice(letters) + "3"


def families(text: str) -> set[str]:
    findings = scan_fields({"content": text}, conversation_store=False)
    return {family_of(f.detector) for f in findings if f.blocking}


PASSWORD = generated(14)
TOKEN = generated(32)


@pytest.mark.parametrize(
    "text",
    [
        # a subscript or an array for a key
        f'os.environ["SERVICE_TOKEN"] = "{TOKEN}"',
        f"settings['db_password'] = '{PASSWORD}'",
        f'char password[] = "{PASSWORD}";',
        # the operators of other languages
        f"DEPLOY_PASSWORD ?= {PASSWORD}",
        f'db_password <- "{PASSWORD}"',
        f'var password = @"{PASSWORD}";',
        # the value first
        f'if ("{PASSWORD}" == password) {{ grant(); }}',
        f"if '{PASSWORD}' != admin_password:",
        # a key named only "key" holding a generated value
        f"key={generated(32, string.hexdigits[:16])}",
        # a line that is only the name and a quoted value
        f'client_secret "{TOKEN}";',
        # JSON inside a string literal, its quotes escaped
        f'body = "{{\\"user\\":\\"ops\\",\\"password\\":\\"{PASSWORD}\\"}}"',
        # short names for a password: psw, pw after a separator or alone
        f'smtp_psw: "{PASSWORD}"',
        f"DB_PW={PASSWORD}",
        f'$pw = "{PASSWORD}";',
        # a login call's password argument
        f'server.login(sender, "{PASSWORD}")',
        f"authenticate(request.user, '{PASSWORD}')",
        # beside the shapes that are not values: a passcode, a password set "to"
        # a value, a token in the query of an API's URL (not an image's)
        f"door passcode = {PASSWORD}",
        f"Set the admin password to {PASSWORD} before the demo.",
        f"curl https://api.internal/v1/export?token={TOKEN}",
        f"postgres://app:{PASSWORD}@db.internal/app",
    ],
)
def test_a_password_assigned_in_any_syntax_is_refused(text):
    assert "secrets" in families(text)


@pytest.mark.parametrize(
    "text",
    [
        f"define('DB_PASSWORD', '{PASSWORD}');",
        f'System.setProperty("javax.net.ssl.trustStorePassword", "{PASSWORD}");',
        f"buildConfigField 'String', 'MAPS_API_KEY', '\"{TOKEN}\"'",
        f"<password>{PASSWORD}</password>",
        f'<property name="hibernate.connection.password" value="{PASSWORD}"/>',
        f'<entry key="api.token">{TOKEN}</entry>',
    ],
)
def test_a_key_and_value_as_arguments_or_xml_are_refused(text):
    assert "secrets" in families(text)


@pytest.mark.parametrize(
    "text",
    [
        f"REDIS_URL=redis://:{PASSWORD}@cache.internal:6379/0",
        f"git clone https://{TOKEN}@git.internal/platform/deploy.git",
        f"https://chat.internal/api/webhooks/{_RNG.randint(10**17, 10**18)}/{generated(60)}",
        f'session.auth = HTTPBasicAuth("svc-reports", "{PASSWORD}")',
        f'requests.get(url, auth=("svc-reports", "{PASSWORD}"))',
        f"sshpass -p '{PASSWORD}' ssh ops@bastion.internal",
        f"mysql -h db.internal -u app -p{PASSWORD} ledger",
        f'ldapsearch -x -D "cn=admin,dc=corp" -w {PASSWORD} -b dc=corp',
        f"smbclient //files.internal/share -U 'CORP\\svc%{PASSWORD}'",
    ],
)
def test_basic_auth_in_urls_calls_and_commands_is_refused(text):
    assert "secrets" in families(text)


def _b64(value: str) -> str:
    return base64.b64encode(value.encode()).decode()


@pytest.mark.parametrize(
    "text",
    [
        # JSON, as kubectl prints it
        '{"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "svc"}, '
        f'"data": {{"client-id": "{_b64("svc-reports")}", "client-key": "{_b64(PASSWORD)}"}}}}',
        # a value wrapped in a block scalar
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: tls\ndata:\n"
        f"  tls.key: |\n    {_b64(TOKEN * 2)}\n",
        # kind after the data, in lower case, with a comment inside the block
        f"data:\n  # encoded\n  user: {_b64('svc-reports')}\nmetadata:\n  name: x\nkind: secret\n",
    ],
)
def test_a_kubernetes_secret_in_any_layout_is_refused(text):
    assert "secrets" in families(text)


@pytest.mark.parametrize(
    "text",
    [
        # lower case and digits only (base36), as several vendors issue keys
        f"publish with {generated(42, _BASE36)} before the release",
        # ... as short as the rule allows, alone
        generated(36, _BASE36),
        # an upper-case vendor prefix and key
        f"monitoring key: ACME-{generated(27, string.ascii_uppercase + string.digits)}",
        # a prefix that holds a digit
        f"acme2_{generated(30)}",
        # a chat bot token a character short or long
        f"{_RNG.randint(10**9, 10**10 - 1)}:{generated(34)}",
        f"{_RNG.randint(10**9, 10**10 - 1)}:{generated(36)}",
    ],
)
def test_a_generated_token_without_a_name_is_refused(text):
    assert "secrets" in families(text)


@pytest.mark.parametrize(
    "text",
    [
        # SQL that sets a password
        f"ALTER USER ledger WITH PASSWORD '{PASSWORD}';",
        f"CREATE ROLE reporting LOGIN PASSWORD '{PASSWORD}' NOSUPERUSER;",
        f"CREATE USER 'ops'@'%' IDENTIFIED WITH caching_sha2_password BY '{PASSWORD}';",
        f"GRANT SELECT ON ledger.* TO 'report'@'10.0.%' IDENTIFIED BY '{PASSWORD}';",
        f'ALTER ROLE etl IDENTIFIED BY "{PASSWORD}"',
        # account commands that take the password as an argument or on their input
        f"redis-cli -h cache.internal -p 6380 -a {PASSWORD} info replication",
        f"htpasswd -bc /etc/nginx/.htpasswd grafana {PASSWORD}",
        f"net user svc_backup {PASSWORD} /add /domain",
        f"rabbitmqctl change_password ledger {PASSWORD}",
        f"echo '{PASSWORD}' | sudo -S systemctl restart ledger",
        f"echo 'deploy:{PASSWORD}' | chpasswd",
        # redis.conf, a long option with its value after a space, prose without quotes
        f"requirepass {PASSWORD}",
        f"ansible-playbook site.yml --vault-password {PASSWORD}",
        f"The root password for db-3 is {PASSWORD}.",
    ],
)
def test_a_password_given_to_a_database_or_an_account_command_is_refused(text):
    assert "secrets" in families(text)


@pytest.mark.parametrize(
    "text",
    [
        "REDIS_URL=redis://:${REDIS_PASSWORD}@cache.internal:6379/0",
        'sshpass -p "$SSH_PASS" ssh ops@bastion.internal',
        "<password>${DB_PASSWORD}</password>",
        "define('DB_PASSWORD', 'changeme');",
        "define('AUTH_KEY', 'put your unique phrase here');",
        'if ("changeme" == password) { warn(); }',
        "https://chat.internal/api/webhooks/XXXXXXXX/XXXXXXXXXXXXXXXXXXXXXXXXXXXX",
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\nstringData:\n"
        "  password: {{ .Values.password | b64enc }}\n  token: <your-token>\n",
        "monitoring key: ACME-XXXXXXXXXXXXXXXXXXXXXXXXXXX",
    ],
)
def test_a_placeholder_in_a_new_shape_never_blocks(text):
    assert families(text) == set()


@pytest.mark.parametrize(
    "text",
    [
        # prose that starts a line with the word
        "Password reset links expire after an hour.",
        # mysql prompts for the password when -p stands alone
        "mysql -u root -p ledger < dump.sql",
        # settings about a password, labels and lists of names
        "<passwordEncoder>bcrypt</passwordEncoder>",
        'translations.put("password", "Mot de passe");',
        'kinds = ["Secret", "ConfigMap", "Deployment"]',
        "if password == confirm_password:",
        # a login call with variables, a password read at run time, "pw" inside a word
        "client.login(username, password)",
        'pw = getpass.getpass("Password: ")',
        'upward_trend = "steady growth"',
        '{"key": "cpu.usage.idle[0,1]", "value": 12}',
        # a scheme whose value is a variable
        "Authorization: Negotiate ${KERBEROS_TICKET}",
        # digests and content ids
        '<script src="/app.js" integrity="sha384-' + generated(64) + '"></script>',
        "ipfs://bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi",
        "/nix/store/b6gvzjyb2pg0kjfwrjmg1vfhh54ad73z-firefox-33.1/bin/firefox",
        # a webhook's documentation, not its address
        "https://docs.example.com/webhooks/v2/events/order-created-2024-06",
        "https://api.github.com/repos/octo/hello/hooks/12345678/deliveries",
        # version pins of packages named after secrets
        "Requires-Dist: detect-secrets==1.5.0",
        "pip install tokenizers==0.13.2 python-keycloak==4.2.0rc1",
        # code and templates where a value would be, cut at a space or bracket
        'print(f"Secret: {finding.secret}")',
        'assert finding.secret == finding["secret"]',
        "TOKEN=$(vault kv get -field=token ops/ci)",
        "Token:\n\n![diagram](docs/token-flow.svg)",
        # words around a secret word: what tokens are for, a verb, a tokenizer
        "The gateway uses tokens to authenticate every request.",
        "Strings passed to `parse_url` must be valid URLs.",
        "passport_number: verified",
        # a coverage badge's token, public by design
        "[![coverage](https://codecov.io/gh/acme/ledger/graph/badge.svg?token=Q7RT2KX9ZP)](https://codecov.io)",
        # a default login, the same word twice
        "amqp://guest:guest@localhost:5672//",
        "postgresql://postgres:postgres@localhost:5432/test",
        # the word itself spelt with symbols
        "postgres://app:p#ssword!@localhost/app",
        # URL paths: a page title, a commit
        "https://wiki.internal/spaces/OPS/pages/14092424/Runbook+for+Ledger+Failover+-+March+2026",
        "https://github.com/acme/ledger/blob/e77fd93598cb6e7dc1b8b1f53c00e5aa410c201a/deploy/Dockerfile",
        # a vendor's example key
        'export AWS_SECRET_ACCESS_KEY="wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"',
        # account commands and options without a password in them
        "net user svc_backup * /add",
        "net user svc_backup /domain",
        "redis-cli -a $REDIS_PASSWORD ping",
        "ansible-playbook site.yml --vault-password-file ~/.vault_pass",
        "Pass --ask-vault-pass to be prompted.",
        "CREATE ROLE reporting LOGIN PASSWORD NULL;",
        # prose about a password, a date or a version where a value would be
        "The password for staging is stored in Vault.",
        "The token lifetime for the ledger is 2026-12-01T00:00.",
        "The password policy in force is v2.3.1-strict.",
        # grammar notation, a word that ends a sentence on a line of its own
        "secret = [FWS] 1*atext [FWS]",
        "The directory rejected the account name and\n    password pairing.",
        "amqp://[[user]:[pass]]@broker.internal:5672/[vhost]",
        # prose: long words, hyphenated ones, emphasis, a key that is a verb
        "Check that the new password is substantially different from the old one.",
        "The signing token: short-lived, renewed by the agent.",
        "The refresh token is *never* written to disk.",
        "Passed to `retry_policy` unchanged.",
        # counts and ids of tokens, quoted text that opens with a space
        "generate(prompt, max_new_tokens=2048, total_tokens: 65536)",
        "TokenScore(token=30522, token_text=' ledger')",
        # "identified by" outside a statement about an account
        "Each shard is identified by 'region' and 'tenant' in the routing table.",
    ],
)
def test_text_that_reads_like_a_credential_is_not_one(text):
    assert "secrets" not in families(text)


def _armoured(label: str) -> str:
    body = base64.b64encode(bytes(_RNG.randrange(256) for _ in range(400))).decode()
    lines = "\n".join(body[at : at + 64] for at in range(0, len(body), 64))
    return f"-----BEGIN {label}-----\n\n{lines}\n-----END {label}-----"


@pytest.mark.parametrize(
    "text",
    [
        _armoured("PGP PUBLIC KEY BLOCK"),
        _armoured("PUBLIC KEY"),
        _armoured("RSA PUBLIC KEY"),
        _armoured("PGP SIGNATURE"),
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI" + generated(43) + " deploy@ci",
        "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ" + generated(300) + " ops@laptop",
    ],
)
def test_a_public_key_or_a_signature_is_not_a_secret(text):
    assert "secrets" not in families(text)


def test_the_same_base64_outside_a_public_armour_is_refused():
    body = _armoured("PUBLIC KEY").split("\n")[2]
    assert "secrets" in families(f"blob: {body}")
