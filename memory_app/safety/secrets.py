"""Credentials the engine does not cover: our own shapes.

The engine (engine.py) knows vendors. What it misses are credentials
without a vendor: passwords in URLs, in calls and on command lines, tokens
in webhook URLs, `Authorization:` headers of any scheme, Kubernetes
`Secret` manifests (YAML or JSON), a password or key assigned in
env/ini/yaml/json files, code of any language, XML and prose, key blocks
and certificates, JWTs (signed or not), and generated tokens with a
vendor prefix. Each rule captures the value, and a value that is a
placeholder (placeholders.py) never blocks.
"""

import re
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator

from memory_app.safety import prefilter
from memory_app.safety.multimatch import Ends, MultiMatch
from memory_app.safety.placeholders import is_placeholder, is_reference
from memory_app.safety.types import Detector, Span

# Words that name a secret inside an identifier (DB_PASSWORD, apiKey, …).
_SECRET_WORD = (
    r"pass(?:word|wd|phrase|wort)?|pwd|secret|token|api[_.-]?key|apikey|access[_.-]?key"  # noqa: S105
    r"|private[_.-]?key|auth[_.-]?key|credentials?|licen[cs]e(?:[_.-]?key)?|signing[_.-]?key"
    r"|encryption[_.-]?key|master[_.-]?key|session[_.-]?key|app[_.-]?key"
    r"|(?<=[a-z0-9_.-])(?:key|private|access)\b|(?<=[a-z0-9])(?-i:KEY|PRIVATE|ACCESS)"
    r"|(?<=[_.-])pat\b|psw|(?<![a-z0-9])pw\b"
)
# Identifiers that name where a secret lives or what it is, not the secret.
_NOT_A_VALUE_KEY = re.compile(
    r"(?:_|-|\.|\b)(?:file|path|dir|name|id|type|length|len|url|uri|env|var|field|header|"
    r"prefix|format|policy|expiry|expires|ttl|hint|label|count|enabled|required|min|max|"
    r"source|ref|arn|mode|hash|algorithm|pattern|regex|placeholder|prompt|message|text|title|"
    r"help)$|^(?:no|use|require|reset|forgot|change|new|confirm)[_-]|tokeni[sz]",
    re.I,
)
# "pass" alone is a secret word only at an identifier boundary (DB_PASS,
# dbPass), not inside another word (namepass, bypass, compass).
# Nor is it one with letters after it (passed, Passed, passport), but for passcode.
_GLUED_PASS = re.compile(
    r"^(?!(?i:.*(?:password|passwd|passphrase|pwd|secret|token|key|cred)))"
    r"(?:.*[a-z]pass(?:$|[^a-z])|.*(?i:pass)(?!(?i:code))[a-z])"
)
_KEY = rf"(?<![\w.-])[\w.-]*?(?:{_SECRET_WORD})[\w.-]*"
# A key named only "key" (or "private", "access") names a secret only
# when its value is a generated token.
_BARE_KEYS = ("key", "private", "access")
_ASSIGNED_KEY = (
    rf"(?<![\w.-])(?:[\w.-]*?(?:{_SECRET_WORD})[\w.-]*|(?:{'|'.join(_BARE_KEYS)})(?![\w.-]))"
)
# A quoted value, the quotes possibly escaped as inside a string literal
# (\"…\"), or C#'s verbatim @"…".
_QUOTED = r"@?\\?(?P<q>[\"'`])(?P<qv>(?:(?!\\?(?P=q))[^\n]){{{min},200}})\\?(?P=q)"
_BARE = r"(?P<bv>[^\s\"'`,;<>)\]}}]{{{min},200}})"

# After the key: its closing quote, escaped inside a string literal
# ("{\"password\":\"…\"}") or not, a subscript's bracket (env["TOKEN"] =,
# char password[] =), then the operator of any language (=, :=, ?=, ||=,
# <-, =>, ==) or a verb of prose.
_ASSIGNMENT_TAIL = (
    r"(?:[\"'`]?\]|\[\])?(?:\\?[\"'`])?"
    r"(?P<sep>\s*(?:={1,3}|!==?|[:?]=|\|\|=|=>|->|<-|:|\s+(?:is|was|are|to|set\s+to)\s*:?)\s*)"
    rf"(?:{_QUOTED.format(min=4)}|{_BARE.format(min=4)})"
)
_ASSIGNMENT = re.compile(rf"(?i)(?P<key>{_ASSIGNED_KEY}){_ASSIGNMENT_TAIL}")
# "deepgramKEY io3l0urk…", "oanda SECRET key ABCD…": a secret word, up to
# two short words, then a long token that mixes digits and letters or is
# long enough (20+) not to be a word.
_SPACED_WORD = r"(?:\s+(?:key|token|code|id)\b)?"  # the key's one more word
_SPACED_VALUE = (
    r"\s+[\"']?(?P<bv>(?:(?=[^\s]*\d)(?=[^\s]*[A-Za-z])[A-Za-z0-9+/=_.:-]{16,200}"
    r"|[A-Za-z0-9_-]{20,200}))(?![\w+/=])"
)
_SPACED = re.compile(
    rf"(?i)\b(?P<key>[\w.-]*(?:{_SECRET_WORD}|key|private|access){_SPACED_WORD}){_SPACED_VALUE}"
)

_PATTERNS: dict[str, re.Pattern[str]] = {
    # The engine's AWS rule rejects many real-shaped key IDs; the prefix is enough.
    "aws_access_key_id": re.compile(
        r"(?<![A-Z0-9])(?P<bv>(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|A3T[A-Z0-9])[A-Z0-9]{16})(?![A-Z0-9])"
    ),
    # A chat bot token: the bot's numeric id, a colon, 35 characters of key
    # (give or take one: a copy often loses or gains a character).
    "bot_token": re.compile(
        r"(?<![\w:])(?P<bv>\d{8,10}:(?=[\w-]*[A-Z])(?=[\w-]*[a-z])[A-Za-z0-9_-]{34,36})(?![\w-])"
    ),
    # user:password@ in any scheme's URL; the user may be empty (redis://:pw@).
    "url_credentials": re.compile(
        r"(?i)\b[a-z][a-z0-9+.-]{1,20}://[^\s:/@'\"\[\]]*:(?P<bv>[^\s@/'\"\[\]]{3,})@[\w.\[\]-]+"
    ),
    # A token in a URL: as its user (https://<token>@git.host/…), or in the
    # path of a webhook, where the path is the credential.
    "url_token": re.compile(
        r"(?i)\b[a-z][a-z0-9+.-]{1,20}://(?P<qv>[\w-]{20,})@[\w.-]+"
        r"|\bhttps?://[^\s'\"<>]*?hook[^\s'\"<>]*?/(?P<bv>[\w-]{20,})(?![\w-])"
    ),
    # -u user:password, -u user … -p password; the password flags of tools
    # that take one inline: sshpass -p, mysql -p<password> (glued: a space
    # after -p means "prompt"), ldap* -w, samba's -U user%password.
    "cli_credentials": re.compile(
        r"(?i)(?:\s-{1,2}(?:u|user|username)[\s=]+['\"]?[^\s:'\"]+:(?P<bv>[^\s'\"]{3,})"
        r"|\s-{1,2}(?:u|user|username)[\s=]+\S+.*?\s-{1,2}(?:p|pw|pass|password)[\s=]+['\"]?"
        r"(?P<qv>[^\s'\"]{3,})"
        r"|(?:\bsshpass\s+(?-i:-p)\s*|\b(?:mysql|mariadb)\w*\b[^\n|;&]*?\s(?-i:-p)(?=\S)"
        r"|\bldap\w+\b[^\n|;&]*?\s(?-i:-w)\s+|\s(?-i:-U)\s+['\"]?[^\s%'\"]+%)"
        r"['\"]?(?P<fv>[^\s'\"]{3,}))"
    ),
    # .netrc, gradle, ini without "=", redis.conf: a line that starts with the word;
    # or a line that is only a secret's name and a quoted value
    # (private_key "…";), as in HCL blocks and Groovy or Ruby calls.
    "password_line": re.compile(
        r"(?im)(?:^|\blogin\s+\S+)\s*(?:password|passwd|requirepass|masterauth)\s+"
        r"(?:[\"'](?P<qv>[^\s\"']{4,})[\"']|(?P<bv>[^\s\"']{4,})(?P<rest>[^\n]*))"
        r"|^(?=[ \t]*[\w.-]+[ \t]+[\"'])"  # the line's shape first: cheaper than the key's
        rf"[ \t]*(?P<akey>{_KEY})[ \t]+[\"'](?P<fv>[^\"'\n]{{4,200}})[\"'][ \t]*;?[ \t]*$"
    ),
    # Prose: "the password for the admin user is 'hunter22'".
    "password_in_prose": re.compile(
        r"(?i)\b(?:password|passphrase|passcode|secret|token)\b"
        r"(?:[^.\n\"']|\"[^\"\n]{1,30}\"|'[^'\n]{1,30}'){0,40}?\b(?:is|was)\s*:?\s*"
        r"(?:[\"'`](?P<qv>[^\"'`\n]{3,64})[\"'`]|(?P<bv>[^\s\"'`]{7,63}[^\s\"'`.,;:!?)]))"
    ),
    # SQL that sets a password: ALTER USER … WITH PASSWORD '…', CREATE ROLE
    # … LOGIN PASSWORD '…', IDENTIFIED [WITH plugin] BY '…'.
    "sql_password": re.compile(
        r"(?i)\bpassword\s+[\"'](?P<qv>[^\"'\n]{4,200})[\"']"
        # IDENTIFIED BY in a statement about a user or a role, or after an
        # account's 'name'@'host': a library "identified by 'name'" is prose.
        r"|(?:\b(?:user|role)\b[^;\n]{0,200}?|@[\"'`]?[\w.%-]*[\"'`]?\s+)"
        r"identified\s+(?:with\s+\w+\s+)?by\s+[\"'](?P<fv>[^\"'\n]{4,200})[\"']"
    ),
    # Commands that take an account's password as an argument (redis-cli -a,
    # htpasswd -b, net user, rabbitmqctl add_user) or on their input
    # (echo … | sudo -S, chpasswd, passwd --stdin).
    "account_command": re.compile(
        r"(?i)(?:\bredis-cli\b[^\n|;&]*?\s-a|\bhtpasswd\s+-\w*b\w*(?:\s+-\w+)*\s+[^\s-]\S*\s+[^\s-]\S*"
        r"|\bnet user\s+\S+|\brabbitmqctl\s+(?:add_user|change_password)\s+\S+)"
        r"\s+[\"']?(?P<bv>[^\s\"'/*-][^\s\"']{3,})"
        r"|\becho\s+(?:-\w+\s+)?[\"']?(?:[\w.@-]+:)?(?P<qv>[^\s\"'|:]{4,})[\"']?\s*\|\s*"
        r"(?:sudo\s+-S\b|(?:sudo\s+)?(?:chpasswd|passwd\s+--stdin)\b)"
    ),
    # A long option for a password with its value after a space:
    # --vault-password …, --db-passphrase … (the = form is an assignment).
    "password_flag": re.compile(
        r"(?i)(?<![\w-])--[\w-]*?pass(?:word|phrase|wd)?\s+[\"']?(?P<bv>[^\s\"'-][^\s\"']{3,})"
    ),
    # A lowercase vendor prefix and a long mixed token: tfp_…, odt_…, tvly-…,
    # sq0atp-… (a digest's sha384-… is not one)
    "prefixed_token": re.compile(
        r"(?<![\w-])(?P<bv>(?!(?:sha|md)\d)[a-z][a-z0-9]{1,6}[_-]"
        r"(?=[A-Za-z0-9]*\d)(?=[A-Za-z0-9]*[A-Z])(?=[A-Za-z0-9]*[a-z])[A-Za-z0-9]{20,})(?![\w-])"
        # …or a compound that says what it is: app-secret-key-<token>
        r"|(?i:\b[\w.-]*?(?:secret|token|private|access)[\w.-]*?[._-])"
        r"(?P<qv>(?=[A-Za-z0-9]*\d)(?=[A-Za-z0-9]*[A-Za-z])[A-Za-z0-9]{20,})(?![\w-])"
        # …or an upper-case prefix and key: NRAK-…, CFPAT-…
        r"|(?<![\w-])(?P<fv>[A-Z]{3,6}[_-](?=[A-Z0-9]*\d)[A-Z0-9]{24,})(?![\w-])"
    ),
    # Authorization: <scheme> <value>, also set from code: headers["Authorization"] = …,
    # setHeader("Authorization", …)
    "authorization_header": re.compile(
        r"(?i)\b(?:proxy-)?authori[sz]ation(?:[\"']\s*,|[\"']?\]?\s*[:=])\s*[\"']?"
        r"(?:[A-Za-z][\w-]*\s+)?(?P<bv>[A-Za-z0-9._~+/:=-]{8,})"
        r"|\b(?:bearer|basic|token|digest):?\s+(?P<qv>(?=[A-Za-z0-9._~+/-]*\d)[A-Za-z0-9._~+/-]{16,}=*)"
    ),
    "private_key_block": re.compile(
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
        r"(?:[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----)?"
    ),
    "certificate_block": re.compile(
        r"-----BEGIN CERTIFICATE-----(?:[\s\S]*?-----END CERTIFICATE-----)?"
    ),
    "kubeconfig_credential": re.compile(
        r"(?m)^\s*(?:client-key-data|client-certificate-data|certificate-authority-data|token)"
        r"\s*:\s*(?P<bv>[A-Za-z0-9+/=._-]{20,})"
    ),
    "jwt": re.compile(
        r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.(?:[A-Za-z0-9_-]{8,})?"
    ),
    "password_assignment": _ASSIGNMENT,
    # The value first: if ("s3cr3t!" == password)
    "reverse_comparison": re.compile(
        rf"(?i)\\?[\"'](?P<qv>[^\"'\\\n]{{4,200}})\\?[\"']\s*(?:={{2,3}}|!==?)\s*(?P<key>{_KEY})"
    ),
    # The key and the value as two string arguments or items:
    # define('DB_PASSWORD', '…'), setenv("API_TOKEN", "…"), {"secret", "…"};
    # not a JSON value followed by the next key ("kind": "Secret", "data": …).
    "key_value_arguments": re.compile(
        rf"(?i)[\"'](?<!:[\"'])(?<!:\s[\"'])(?P<key>{_KEY})[\"']\s*,\s*(?:\\?[\"']){{1,2}}"
        rf"(?P<qv>[^\"'\\\n]{{4,200}})\\?[\"'](?!\s*:)"
    ),
    # XML: <password>…</password> (the tag ends with the secret word, so
    # not <passwordEncoder>), <add key="SmtpPassword" value="…"/>,
    # <property name="db.password" value="…"/>, <entry key="token">…</entry>
    "key_value_attribute": re.compile(
        rf"(?i)<(?:[\w.-]+:)?(?P<key>(?<![\w.-])[\w.-]*?(?:{_SECRET_WORD}))(?:\s[^<>\n]*)?>"
        rf"(?P<qv>[^<>\n]{{4,200}})</"
        rf"|\b(?:key|name)\s*=\s*[\"'](?P<akey>{_KEY})[\"']\s*"
        rf"(?:value\s*=\s*[\"'](?P<fv>[^\"'\n]{{4,200}})[\"']|>(?P<bv>[^<>\n]{{4,200}})</)"
    ),
    # NetworkCredential("user", "pass"), PSCredential, HTTPBasicAuth("u", "p"),
    # auth=("u", "p"), basic_auth: ["u", "p"]; a login call's two arguments,
    # the password quoted: smtp.login(user, "…"), authenticate(name, '…')
    "credential_call": re.compile(
        r"(?i)\b\w*(?:credentials?|auth)\s*[=:]?\s*[(\[]\s*[\"'][^\"'\n]+[\"']\s*,\s*"
        r"[\"'](?P<qv>[^\"'\n]{4,200})[\"']"
        r"|\b(?:login|log_in|authenticate)\s*\(\s*[^,()\n]{1,200},\s*"
        r"[\"'`](?P<fv>[^\"'`\n]{4,200})[\"'`]\s*\)"
    ),
    "keyword_token": _SPACED,
}

# A Kubernetes Secret, in YAML or JSON, its kind before or after its data.
# Only whether one is in the text matters, so the optional opening quote
# is left out, and the pattern opens with the characters a case-blind "k"
# matches: the regex engine then skips to each in one fast loop instead of
# trying the pattern at every position (a third of a millisecond on a long
# note that says "secret" often).
_K8S_SECRET = re.compile(
    r"[kK\u212a](?<=\b[kK\u212a])(?i:ind[\"']?\s*:\s*[\"']?secret[\"']?(?![\w-]))"
)
# Its data or stringData: the YAML lines indented under the key, or a
# JSON (or YAML flow) mapping.
_K8S_DATA = re.compile(
    r"(?m)^(?P<indent>[ \t]*)(?:data|stringData):[ \t]*\n"
    r"(?P<body>(?:(?P=indent)[ \t]+\S.*(?:\n|$))+)"
    r"|[\"']?\b(?:data|stringData)[\"']?\s*:\s*\{(?P<flow>[^{}]*)\}"
)
# An entry of the block; its value may be base64 wrapped in a block scalar
# (key: |, then the lines). A file under stringData (config.yaml: |) is
# left to the other rules, which see its lines.
_K8S_ENTRY = re.compile(
    r"(?m)^[ \t]+[\"']?[\w.-]+[\"']?:[ \t]*"
    r"(?:[|>][-+]?[ \t]*\n[ \t]+(?=[A-Za-z0-9+/=]+\s)|[\"']?)(?P<bv>[^\s\"']{4,})"
)
_K8S_FLOW_ENTRY = re.compile(r"[\"']?[\w.-]+[\"']?\s*:\s*[\"']?(?P<bv>[^\s\"',{}]{4,})")


_STRONG_KEY = re.compile(
    r"pass|pwd|psw|(?<![a-z0-9])pw(?![a-z0-9])|secret|token|cred|auth"
    r"|(?:private|api|access|signing|encryption)[_ .-]?key",
    re.I,
)


def _random_looking(value: str) -> bool:
    return (
        len(value) >= 16 and bool(re.search(r"\d", value)) and bool(re.search(r"[A-Za-z]", value))
    )


_PASSPHRASE = re.compile(r"[^\s()=+]+(?: [^\s()=+]+){1,4}")


def _passphrase(key: str, match: re.Match[str], value: str) -> bool:
    """A quoted password of a few words ('open sesame'), not code with spaces."""
    quoted = "qv" in match.re.groupindex and match.group("qv") is not None
    return quoted and bool(re.search(r"pass|pwd", key, re.I)) and bool(_PASSPHRASE.fullmatch(value))


_TRANSITION = re.compile(r"[A-Za-z]\d|\d[A-Za-z]")
_SYMBOL = re.compile(r"[^\w.:/-]")


def _generated(value: str) -> bool:
    """Both cases and a digit, a letter, a digit and a symbol, or letters and
    digits interleaved: Zq8wLm4T, s3cr3t!x, j59pjomke5f7o3 (not a date or a version)."""
    letter, digit = any(c.isalpha() for c in value), any(c.isdigit() for c in value)
    both_cases = any(c.islower() for c in value) and any(c.isupper() for c in value)
    mixed = both_cases or (letter and bool(_SYMBOL.search(value)))
    return digit and (mixed or len(_TRANSITION.findall(value)) >= 3)


def _random_token(value: str) -> bool:
    """Letters and digits interleaved as generated keys are, not words and numbers."""
    return len(value) >= 16 and len(_TRANSITION.findall(value)) >= 3


# A rule's value is in one of these groups: quoted, bare, or a flag's or
# an attribute's value.
_VALUE_GROUPS = ("qv", "bv", "fv")
# Rules that capture the name the value is assigned to.
_KEYED = {
    "password_assignment",
    "keyword_token",
    "key_value_attribute",
    "key_value_arguments",
    "reverse_comparison",
    "password_line",
}


def _value(match: re.Match[str]) -> tuple[str, int, int] | None:
    for group in _VALUE_GROUPS:
        if group in match.re.groupindex and match.group(group) is not None:
            return match.group(group), match.start(group), match.end(group)
    return None


def _key(match: re.Match[str]) -> str:
    groups = match.groupdict()
    return groups.get("key") or groups.get("akey") or "password"


# mysql -p followed by a space prompts for the password; the word after
# it is the database.
_PROMPTING_P = re.compile(r"\b(?:mysql|mariadb)\w*\b")


# A few words, hyphenated or not, with no digit: a scheme or a header's name.
_HEADER_NAME = re.compile(r"[A-Za-z]+(?:-[A-Za-z]+)*")


def _line_before(match: re.Match[str]) -> str:
    return match.string[match.string.rfind("\n", 0, match.start()) + 1 : match.start()]


# A version pin: detect-secrets==1.5.0, tokenizers==0.13.2.
_VERSION = re.compile(r"v?\d+(?:\.\d+)+(?:[.-]?[a-z]+\d*)?", re.I)
# The query of an image's URL: a badge's token is public by design.
_IMAGE_QUERY = re.compile(r"\.(?:svg|png|gif|jpe?g|webp)\?[^\s\"'<>]*$", re.I)


# Words alone, hyphenated or not, and a sentence's end: in unquoted prose
# they are the sentence going on, not a value. A passphrase this long made
# only of letters is not told from a long word, and is let through.
_WORDS_ONLY = re.compile(r"[A-Za-z]+(?:[-'][A-Za-z]+)*[.,;:!?]?")
# A token's name without a password's, a PIN's or a code's: its digits
# count tokens or name one (max_tokens, token_id), where a PIN's are the secret.
_TOKEN_COUNT_KEY = re.compile(r"^(?!.*(?:pass|pwd|psw|pin|code)).*token", re.I)
# A word and the punctuation that ends a sentence or a clause.
_SENTENCE_END = re.compile(r"[A-Za-z]+[.,;:!?]")


def _url_user(match: re.Match[str]) -> str:
    head = match.string[match.start() : match.start("bv") - 1]
    return head[head.find("://") + 3 :]


def _plausible(name: str, match: re.Match[str], value: str) -> bool:
    if is_placeholder(value):
        return False
    if name == "url_credentials" and _url_user(match).lower() == value.lower():
        return False  # a default login (guest:guest, postgres:postgres), not a secret
    if name == "password_line" and match.group("bv") and _SENTENCE_END.fullmatch(value):
        return False  # a word that ends a sentence: "the username/ password combination."
    if name == "password_flag" and (value.isalpha() or value.startswith(("$", "/", "~"))):
        return False  # a word ("--password prompt"), a variable or a file
    if name == "password_in_prose" and match.group("bv") is not None:
        return _generated(value)  # unquoted: only what reads as made, not a word or a date
    if name == "cli_credentials" and match.group("qv") and _PROMPTING_P.search(_line_before(match)):
        return False
    if name == "key_value_arguments" and (" " in value or (value.isalpha() and len(value) < 12)):
        return False  # a list of names or a label: ("password", "Mot de passe")
    if name == "url_token" or (name == "prefixed_token" and match.group("fv")):
        return _random_token(value)
    if name == "authorization_header" and len(value) < 20 and _HEADER_NAME.fullmatch(value):
        return False  # a scheme alone (Negotiate ${TICKET}), a list of headers
    if name in _KEYED:
        key = _key(match)
        if _NOT_A_VALUE_KEY.search(key) or _GLUED_PASS.search(key):
            return False
        if value.startswith(("/", "./", "~/", "http://", "https://")) or _VERSION.fullmatch(value):
            return False
        if _IMAGE_QUERY.search(_line_before(match)):
            return False
        if is_reference(value) and not _passphrase(key, match, value):
            return False
        if not _STRONG_KEY.search(key) and not _random_looking(value):
            return False  # tag_key = "field": only a random value makes "key" a secret
        if value.isdigit() and len(value) < 9 and _TOKEN_COUNT_KEY.search(key):
            return False  # a count or an id: max_tokens=1024, token=45075
        if value != value.strip():
            return False  # quoted text with a space at an end: token_str=' happiness'
        if name == "password_assignment" and key.lower() in _BARE_KEYS and not _random_token(value):
            return False  # "key": "metric.name[1,2]" is a lookup key, not a secret
        prose = (name == "password_assignment" and "=" not in match.group("sep")) or (
            name == "password_line" and (match.group("rest") or "").strip(" \t;}")
        )
        what_for = name == "password_assignment" and match.group("sep").strip() == "to"
        if what_for and key.lower().endswith("s"):
            return False  # what they are for: "the Hub uses tokens to authenticate"
        if prose and match.group("qv") is None:
            # Unquoted prose ("the token is stored …", "Password reset
            # links expire") needs a value that does not read as a word: a
            # digit or a symbol in it. Env, code and connection-string
            # syntax (PASSWORD=word, $password = word) and a line that
            # holds only the password (.netrc, gradle) are not prose.
            if _WORDS_ONLY.fullmatch(value.strip("*_")):
                return False  # "sufficiently", "TextIOWrapper", "Confidential-client", *never*
            return bool(re.search(r"[\d!@#$%^&*+=?~]", value)) or len(value) >= 12
    return True


def _k8s_secret_spans(text: str, ends: Ends) -> list[Span]:
    if "ecret" not in text or not ends.anywhere("kubernetes_secret"):
        return []
    if not _K8S_SECRET.search(text):  # the native pass may let through more
        return []
    spans = []
    for block in _K8S_DATA.finditer(text):
        part = "body" if block.group("body") is not None else "flow"
        offset = block.start(part)
        entries = _K8S_ENTRY if part == "body" else _K8S_FLOW_ENTRY
        for entry in entries.finditer(block.group(part)):
            if not is_placeholder(entry.group("bv")):
                spans.append(
                    Span("kubernetes_secret", offset + entry.start("bv"), offset + entry.end("bv"))
                )
    return spans


# Most rules cannot match without a word or literal in the text: a secret
# word for the assignment rules, "://" for a URL, "eyJ" for a JWT. Each
# such rule runs only on the lines around one (with the line after, where
# a value may sit), found by the shared prefilter pass; on a long
# write that is a few lines instead of the whole text, and most of the
# scan's time saved. A rule that names its own words (a login call, the
# nouns of prose) waits for those, not for every secret word. Rules that
# need a long token run on the lines that hold one of the shape they need.
_SECRET_STEMS = ("pass", "pw", "psw", "secret", "token", "key", "private", "access", "cred")
_SECRET_STEMS += ("auth", "licen", "_pat", ".pat", "-pat")
_RULE_STEMS: dict[str, tuple[str, ...]] = {
    "password_assignment": _SECRET_STEMS,
    "reverse_comparison": ("==", "!="),
    "key_value_arguments": _SECRET_STEMS,
    "keyword_token": _SECRET_STEMS,
    "password_in_prose": ("pass", "secret", "token"),
    "key_value_attribute": _SECRET_STEMS,
    "credential_call": ("cred", "auth", "login", "log_in"),
    "password_line": _SECRET_STEMS,
    "aws_access_key_id": ("akia", "asia", "agpa", "aida", "aroa", "anpa", "a3t"),
    "url_credentials": ("://",),
    "url_token": ("://",),
    "cli_credentials": ("-u", "sshpass", "mysql", "mariadb", "ldap"),
    "sql_password": ("password", "identified"),
    "account_command": ("redis-cli", "htpasswd", "net user", "rabbitmqctl", "echo"),
    "password_flag": ("pass",),
    "authorization_header": ("authori", "bearer", "basic", "token", "digest"),
    "kubeconfig_credential": ("-data", "token"),
    "jwt": ("eyj",),
    "private_key_block": ("-----begin",),
    "certificate_block": ("-----begin",),
}
# Blocks span many lines: these run on the whole text when their stem is in it.
_WHOLE_TEXT_RULES = {"private_key_block", "certificate_block"}
# Rules that need a long token: the characters and the length of the run
# they cannot match without.
_LONG_TOKEN_RULES = {
    rule: (re.compile(f"{chars}{{{width}}}"), width)
    for rule, (chars, width) in {
        "bot_token": ("[A-Za-z0-9_-]", 34),
        "prefixed_token": ("[A-Za-z0-9]", 20),
    }.items()
}
# Rules whose match opens with its key, a run of [\w.-] characters that
# holds the secret word: in the lines around a stem they are tried only
# where the run around a stem starts ("run"), or at its first word
# character for a rule that opens with \b ("word"), instead of at every
# position. Most of the scan's time went to trying these two at every
# word of those lines.
_KEY_FIRST_RULES = {"password_assignment": "run", "keyword_token": "word"}
# What must follow the key of those rules, as their patterns say it. Their
# key is a run of [\w.-] characters that ends where the run does (an
# assignment's key may also stop at the "-" of "->"), so a key start
# whose run is not followed by this cannot match, and the pattern (most
# of its cost trying where the secret word sits in the key) is not tried
# there.
_KEY_RUN = re.compile(r"[\w.-]*")
_AFTER_KEY = {
    "password_assignment": re.compile(rf"(?i){_ASSIGNMENT_TAIL}"),
    "keyword_token": re.compile(rf"(?i){_SPACED_WORD}{_SPACED_VALUE}"),
}


def _may_follow(after: re.Pattern[str], region: str, start: int) -> bool:
    """Whether the key run at `start` is followed by what `after` needs."""
    end = _KEY_RUN.match(region, start).end()
    return bool(
        after.match(region, end) or (region[end - 1] == "-" and after.match(region, end - 1))
    )


def _regions(text: str, hits: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """The line of each hit (start, end sorted) with the line after it, merged.

    A region opens on the line break before its line, so a rule that wants
    a space or a line start before its match sees one there.
    """
    regions: list[tuple[int, int]] = []
    for hit_start, hit_end in hits:
        if regions and hit_start < regions[-1][1]:
            continue
        start = max(text.rfind("\n", 0, hit_start), 0)
        end = text.find("\n", hit_end)
        end = len(text) if end == -1 else text.find("\n", end + 1)
        end = len(text) if end == -1 else end
        if regions and start <= regions[-1][1]:
            regions[-1] = (regions[-1][0], end)
        else:
            regions.append((start, end))
    return regions


def _is_key_char(char: str) -> bool:
    return char.isalnum() or char in "_.-"  # [\w.-], as the regex engine reads \w


class _Gate:
    """Where in one text each rule is run: the regions of its stems or tokens."""

    def __init__(self, text: str, scanned: prefilter.Scanned) -> None:
        self.text, self.scanned = text, scanned
        self._hits: dict[tuple[str, ...], list[tuple[int, int]]] = {}
        self._regions: dict[tuple[str, ...], list[tuple[int, int]]] = {}
        self._key_starts: dict[tuple[tuple[str, ...], str, int], list[int]] = {}

    def hits(self, rule: str) -> list[tuple[int, int]]:
        stems = _RULE_STEMS[rule]
        if stems not in self._hits:
            self._hits[stems] = self.scanned.at(stems)
        return self._hits[stems]

    def regions(self, rule: str) -> list[tuple[int, int]]:
        if rule in _LONG_TOKEN_RULES:
            token, width = _LONG_TOKEN_RULES[rule]
            # A long token lies inside a run of token characters at least
            # as long: most runs are shorter, and are not searched.
            runs = [(start, end) for start, end in self.scanned.token_runs if end - start >= width]
            found = (m.span() for run in runs for m in token.finditer(self.text, *run))
            return _regions(self.text, found)
        if rule in _WHOLE_TEXT_RULES:
            return [(0, len(self.text))] if self.hits(rule) else []
        stems = _RULE_STEMS[rule]
        if stems not in self._regions:
            self._regions[stems] = _regions(self.text, self.hits(rule))
        return self._regions[stems]

    def key_starts(self, rule: str, start: int, end: int) -> list[int]:
        r"""Where a key around a hit in text[start:end] begins, relative to `start`.

        The start of the [\w.-] run around the hit, or for a rule that
        opens with \b the run's first word character (`_KEY_FIRST_RULES`).
        """
        key = (_RULE_STEMS[rule], _KEY_FIRST_RULES[rule], start)
        kind = key[1]
        if key not in self._key_starts:
            region, hits, found = self.text[start:end], self.hits(rule), set()
            for index in range(bisect_left(hits, (start,)), len(hits)):
                at = hits[index][0] - start
                if at >= len(region):
                    break
                while at > 0 and _is_key_char(region[at - 1]):
                    at -= 1
                while kind == "word" and region[at] in ".-":
                    at += 1
                found.add(at)
            self._key_starts[key] = sorted(found)
        return self._key_starts[key]


_LOGIN = re.compile("(?i)login")


def _line_or_login_starts(region: str) -> list[int]:
    """Where a line of `region` starts, and where "login" does, in order."""
    starts, at = [0], region.find("\n")
    while at != -1:
        starts.append(at + 1)
        at = region.find("\n", at + 1)
    return sorted({*starts, *(match.start() for match in _LOGIN.finditer(region))})


def _scheme_starts(region: str) -> list[int]:
    """Where a URL's scheme may start: 2 to 21 characters before a "://"."""
    starts, at = set(), region.find("://")
    while at != -1:
        starts.update(range(max(at - 21, 0), at - 1))
        at = region.find("://", at + 1)
    return sorted(starts)


# Rules whose every match starts at a place found more cheaply than by
# trying the pattern at every position of the region: a line start or
# "login" (password lines), or a URL's scheme (its 2 to 21 characters
# before "://").
_STARTS: dict[str, Callable[[str], list[int]]] = {
    "password_line": _line_or_login_starts,
    "url_credentials": _scheme_starts,
    "url_token": _scheme_starts,
}


def _matches_from(pattern: re.Pattern[str], region: str, starts: list[int]):
    """`pattern.finditer(region)` for a pattern whose matches begin only at `starts`."""
    end = 0
    for start in starts:
        if start >= end and (match := pattern.match(region, start)):
            end = match.end()
            yield match


# On a long write most regions hold no match of their rule: one native
# pass over the text says which can (multimatch.py), and only those are
# searched.
NATIVE = MultiMatch({**_PATTERNS, "kubernetes_secret": _K8S_SECRET})

prefilter.register(stem for stems in _RULE_STEMS.values() for stem in stems)
_ALL_STEMS = frozenset(stem for stems in _RULE_STEMS.values() for stem in stems)


def _everywhere(text: str) -> Iterator[tuple[str, re.Match[str], int]]:
    """Every rule over the whole text: what the gate must not change."""
    for name, pattern in _PATTERNS.items():
        yield from ((name, match, 0) for match in pattern.finditer(text))


def _matches(text: str, ends: Ends) -> Iterator[tuple[str, re.Match[str], int]]:
    scanned = prefilter.scan(text)
    if not scanned.exact:  # a character whose lower case is longer
        yield from _everywhere(text)
        return
    if scanned.hits.keys().isdisjoint(_ALL_STEMS) and not scanned.token_runs:
        return  # every rule's regions are empty: no stem, no run for a long token
    gate = _Gate(text, scanned)
    for name, pattern in _PATTERNS.items():
        if not ends.anywhere(name):
            continue
        for start, end in gate.regions(name):
            if not ends.within(name, start, end):
                continue
            region = text[start:end]
            if name in _KEY_FIRST_RULES:
                after = _AFTER_KEY[name]
                starts = [
                    at for at in gate.key_starts(name, start, end) if _may_follow(after, region, at)
                ]
                found = _matches_from(pattern, region, starts)
            elif name in _STARTS:
                found = _matches_from(pattern, region, _STARTS[name](region))
            else:
                found = pattern.finditer(region)
            yield from ((name, match, start) for match in found)


def _credential_spans(text: str) -> list[Span]:
    ends = NATIVE.scan(text)
    return _spans_of(text, _matches(text, ends), ends)


def _spans_of(
    text: str, matches: Iterable[tuple[str, re.Match[str], int]], ends: Ends
) -> list[Span]:
    spans: list[Span] = []
    for name, match, offset in matches:
        captured = _value(match)
        if captured is None:
            spans.append(Span(name, offset + match.start(), offset + match.end()))
        elif _plausible(name, match, captured[0]):
            spans.append(Span(name, offset + captured[1], offset + captured[2]))
    return spans + _k8s_secret_spans(text, ends)


DETECTORS: list[Detector] = [Detector("secrets", _credential_spans)]
