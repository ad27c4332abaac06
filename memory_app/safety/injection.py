"""Prompt-injection phrases: text that tries to steer the agent reading it.

Memory is injected into model turns, so a stored "ignore previous
instructions" would be an attack on every later turn. Tolerated only in
conversation stores (scratch memory, where quoting an attack is sometimes
the point) and refused everywhere else, so a draft carrying one can never
be promoted.

The rules below name the families of attack, each in any word order
("ignore the previous instructions", "previous instructions: ignore them",
"the instructions above no longer apply"); what they miss, the learned
classifier (injection_model.py) catches by its wording as a whole.
"""

import re
from bisect import bisect_right
from functools import cached_property

from memory_app.safety import prefilter
from memory_app.safety.injection_model import classifier_spans, words_of
from memory_app.safety.multimatch import EVERYWHERE, MultiMatch
from memory_app.safety.normalize import normalize
from memory_app.safety.types import Detector, Span

_W = r"[\s\W_]+"  # words may be split by any run of spaces or punctuation
_GAP = r"(?:[\s\W_]+\w+){0,6}?[\s\W_]+"  # up to six words in between

_DISMISS = (
    r"(?:ignore|ignoring|forget|forgetting|disregard|disregarding|override|overriding|neglect"
    r"|skip|drop|abandon|discard|set\s+aside|pay\s+no\s+attention\s+to)"
)
_EARLIER = (
    r"(?:previous|prior|above|earlier|preceding|foregoing|original|initial|system|old|all|any"
    r"|every|following)"
)
_ORDERS = (
    r"(?:instructions?|prompts?|rules|directions|directives|guidelines|guidance|messages"
    r"|commands|constraints|orders|context|programming)"
)
_VOID = (
    r"(?:no\s+longer\s+(?:apply|applies|valid|matter)"
    r"|(?:are|is)\s+(?:void|cancelled|canceled|obsolete|revoked|null)"
    r"|should\s+be\s+(?:ignored|disregarded|forgotten)|do(?:es)?\s+not\s+apply)"
)


# The same attacks in the other languages injection sets are written in.
# Text is matched after normalisation, which folds Cyrillic and Greek
# look-alikes to Latin letters ("инструкция" is read as "инcтpyкция"), so
# these words are folded the same way before they are compiled or looked
# for. Words of scripts without spaces (Japanese, Chinese) are matched
# anywhere, the others from the start of a word. No word of the "earlier"
# list opens an English word, so English text is left to the rules above.
def _folded(words: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(normalize(word).lower() for word in words)


_FOREIGN_DISMISS = _folded(
    (
        *("ignor", "olvid", "esquec", "oubli", "dimentic", "vergiss", "vergess", "negeer"),
        *("vergeet", "zignoruj", "zapomnij", "unut", "अनदेख", "नज़रअंदाज़", "भूल"),
        *("игнор", "забуд", "ігнор", "αγν", "ξεχ"),  # noqa: RUF001
        *("무시", "잊", "無視", "忽略", "忘"),
    )
)
_FOREIGN_EARLIER = _folded(
    (
        *("anterior", "previas", "previos", "précédent", "precedenti", "antérieur", "vorherig"),
        *("bisherig", "obig", "vorig", "früher", "eerder", "poprzedni", "önceki", "पिछल", "पूर्व"),
        *("предыдущ", "прежн", "попередн", "προηγ"),
        *("이전", "以前", "之前", "先前", "前の", "上述"),
        # "all" of them, as "ignore all instructions" says in English
        *("alle", "todas", "todos", "toutes", "tous", "tutte", "tutti", "wszystkie", "tüm"),
        *("все", "всі", "όλες"),
    )
)
_FOREIGN_ORDERS = _folded(
    (
        *("instruc", "instruç", "istruzion", "anweisung", "instruktion", "befehl", "vorgabe"),
        *("instructie", "instrukcj", "polece", "talimat", "निर्देश", "auftr", "aufgabe", "regeln"),
        *("инструкц", "указани", "інструкц", "οδηγ"),
        *("지시", "지침", "指示", "指令", "命令"),
    )
)
_FOREIGN_EVERYTHING = _folded(("alles", "todo", "tudo", "всё", "все"))
_FOREIGN_BEFORE = _folded(
    ("davor", "zuvor", "oben", "vorher", "bisher", "anterior", "antes", "выше", "ранее")
)
# Hiragana, katakana, CJK ideographs, Hangul syllables: no space before a word.
_UNSPACED = re.compile("[\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7af]")


def _words(stems: tuple[str, ...]) -> str:
    """Any word opening with one of `stems`."""
    spaced = [re.escape(s) for s in stems if not _UNSPACED.search(s)]
    unspaced = [re.escape(s) for s in stems if _UNSPACED.search(s)]
    alternatives = [rf"\b(?:{'|'.join(spaced)})"] if spaced else []
    alternatives += [f"(?:{'|'.join(unspaced)})"] if unspaced else []
    return rf"(?:{'|'.join(alternatives)})\w*"


_D, _E, _O = _words(_FOREIGN_DISMISS), _words(_FOREIGN_EARLIER), _words(_FOREIGN_ORDERS)
# All three within one line, in any order except with the dismissal between
# the other two, or the dismissal of everything said before. The order is
# checked ahead of the first word, so each word list is written once: the
# native pass reads the rule with look-aheads left out, and Hyperscan takes
# an expression only up to a length. The match runs on to the sentence's end.
_FOREIGN_IGNORE = (
    rf"(?:{_D}(?=.{{0,60}}?(?:{_E}.{{0,30}}?{_O}|{_O}.{{0,30}}?{_E}))"
    rf"|{_E}(?=.{{0,30}}?{_O}.{{0,60}}?{_D})|{_O}(?=.{{0,30}}?{_E}.{{0,60}}?{_D}))"
    r"[^\n.!?。？।]*"  # noqa: RUF001
    rf"|{_D}{_W}{_words(_FOREIGN_EVERYTHING)}(?:{_W}\w+){{0,5}}?{_W}{_words(_FOREIGN_BEFORE)}"
)
# A question for the password, in the languages above.
_FOREIGN_PASSWORD_QUESTION = normalize(
    r"\b(?:was\s+ist|wie\s+lautet)\s+(?:das|dein|ihr)\s+passwort"
    r"|\bquel\s+est\s+(?:le|ton|votre)\s+mot\s+de\s+passe"
    r"|\bcu[aá]l\s+es\s+(?:la|tu|su)\s+contrase[ñn]a"
    r"|\bqual\s+[éèe]\s+(?:(?:a|la)\s+)?(?:(?:sua|tua)\s+)?(?:senha|password)"
    r"|\bкакой\s+(?:(?:у\s+(?:тебя|вас)|ваш|твой)\s+)?пароль"  # noqa: RUF001
    r"|パスワードは何|密码是什么"
).lower()

# Roles that would command the agent; "this is your …" takes only those that
# name no thing of its own ("this is your admin console", "… master branch").
_ROLES = r"(?:developer|creator|programmer|maker|owner|administrator|admin|god|trainer)s?"
_MAKERS = r"(?:developer|creator|programmer|maker|god)s?"
_OBFUSCATIONS = (
    r"(?:leet\w*|pig{_W}latin|morse(?:{_W}code)?|rot13|reverse\w*|backwards|emojis?|ciphers?"
    r"|acrostics?|poems?|songs?|story|stories|riddles?|another{_W}language)"
).replace("{_W}", _W)

# A run of marks that fences a boundary (not "--", a SQL or Lua comment).
_FENCE = r"(?:#{2,}|%{2,}|={2,}|\*{2,})"
# A verb that is code, not an order: an attribute (`cm.output`) or a call
# (`print(e)`), after which the words up to "original message" are code
# and its comments.
_NOT_CODE = r"(?<!\.)"
_NOT_CALLED = r"(?![(\[.])"

_PHRASES = {
    "ignore_instructions": (
        rf"\b{_DISMISS}{_GAP}(?:{_EARLIER}{_W}(?:\w+{_W}){{0,2}}{_ORDERS}\b"
        rf"|{_ORDERS}{_W}(?:that{_W})?you{_W}(?:were|have{_W}been|['’]ve{_W}been){_W}(?:given|told)\b)"  # noqa: RUF001
        rf"|\b{_EARLIER}{_W}(?:\w+{_W}){{0,2}}{_ORDERS}{_GAP}?{_VOID}"
        rf"|\b{_ORDERS}{_W}(?:above|before\s+this|so\s+far){_W}{_VOID}"
        rf"|\b{_DISMISS}{_W}(?:everything|all|what(?:ever)?)\b(?:{_W}\w+){{0,3}}?{_W}(?:above|before|earlier|previously|said|told)\b"
    ),
    # Its own rule: with the English ones it is past what Hyperscan compiles.
    "ignore_instructions_translated": _FOREIGN_IGNORE,
    "disregard_safety": (
        rf"\b(?:disregard|ignore|bypass|disable|turn{_W}off|circumvent|remove|without){_W}(?:all{_W}|any{_W})?"
        rf"(?:the{_W}|your{_W})?(?:safety|guardrails?|filters?|restrictions|censorship|ethical{_W}guidelines"
        rf"|security{_W}polic(?:y|ies)|content{_W}polic(?:y|ies))\b"
    ),
    "skip_approval": (
        rf"\b(?:skip|bypass|circumvent|ignore|avoid){_W}(?:the{_W}|any{_W}|all{_W})?"
        rf"(?:human{_W})?(?:approvals?|reviews?|verifications?|confirmations?|sign[\s-]?offs?)\b"
        rf"|\bpretend{_W}(?:that{_W})?(?:the{_W})?(?:\w+{_W})?(?:approvals?|reviews?|checks?|sign[\s-]?offs?|tests?)"
        rf"{_W}(?:already{_W})?(?:happened|passed|succeeded|went{_W}through|(?:was|were|is|are){_W}done)\b"
    ),
    "no_confirmation": (
        rf"\bdo{_W}not{_W}(?:ask|wait){_W}for{_W}(?:approval|confirmation|permission)\b"
    ),
    "role_override": (
        rf"\b(?:you{_W}are{_W}now|from{_W}now{_W}on{_W}you{_W}(?:are|will{_W}be)|act{_W}as|pretend{_W}(?:to{_W}be|you{_W}are)"
        rf"|you{_W}will{_W}(?:now{_W})?(?:act|behave|respond){_W}as){_W}"
        rf"(?:in{_W})?(?:an?{_W}|the{_W})?(?:\w+{_W})?(?:unrestricted|unfiltered|uncensored|jailbroken|evil|amoral|unethical"
        rf"|dan\b|developer{_W}mode|root{_W}admin|ai{_W}without|different{_W}ai|another{_W}ai)"
    ),
    "persona_jailbreak": (
        r"\b(?:you\s+are|act\s+as|as|called|named|known\s+as|pretend\s+to\s+be|become|hi|hello)"
        r"\s+(?:an?\s+)?[\"']?(?-i:DAN|STAN|DUDE|AIM)\b|(?-i:\b(?:DAN|STAN|DUDE)\b)\s*(?::|mode\b)"
        rf"|\bdo{_W}anything{_W}now\b|\bdeveloper{_W}mode{_W}(?:enabled|output|on)\b"
        rf"|\b(?:you{_W}are|now|been){_W}jailbroken\b|\bimmerse{_W}yourself{_W}(?:in(?:to)?{_W})?(?:the{_W})?role\b"
        rf"|\b(?:free|broken{_W}free){_W}(?:of|from){_W}(?:the{_W})?(?:typical{_W})?(?:confines|restrictions|rules)\b"
        rf"|\b(?:not|never|no{_W}longer){_W}(?:be{_W})?(?:bound|restricted|limited){_W}by{_W}(?:any{_W}|the{_W})?(?:rules|polic|guidelines|restrictions|openai|ethics)"
        rf"|\bstay{_W}in{_W}character\b"
        rf"|\b(?:now|from{_W}now{_W}on),?{_W}you{_W}are{_W}(?-i:[A-Z][a-z]+[^\S\n]+[A-Z][a-z]+)"
        rf"|\byou{_W}are{_W}(?:now{_W})?(?:an?{_W})?(?:\w+{_W})?(?:ai|assistant|model|bot|chatbot|llm|gpt|entity|persona)"
        rf"{_W}(?:\w+{_W}){{0,2}}?(?:with{_W}no|without(?:{_W}any)?){_W}"
        rf"(?:filters?|restrictions|limits|limitations|rules|guidelines|censorship|morals|ethics)\b"
    ),
    "prompt_extraction": (
        rf"\b{_NOT_CODE}(?:repeat|print|reveal|show|output|display|dump|recite|spell{_W}out|write{_W}out|translate|tell{_W}me|leak|paste)"
        rf"{_NOT_CALLED}{_GAP}(?:(?:your|the|my){_W})?(?:initial|original|system|hidden|secret|previous|first|full|entire|exact)"
        rf"{_W}(?:\w+{_W})?(?:prompt|instructions|message|text|rules|directives)\b"
        rf"|\b(?:repeat|print|output|return|write){_W}(?:all{_W}|everything{_W}|the{_W})?(?:text|words|content|everything)"
        rf"{_W}(?:above|before{_W}this|so{_W}far)\b"
        rf"|\bwhat{_W}(?:is|are|was|were){_W}your{_W}(?:system{_W}|initial{_W}|original{_W})(?:prompt|instructions)\b"
        rf"|\b(?:repeat|recite|reveal|dump|list|print|output|show{_W}me|tell{_W}me|give{_W}me){_W}"
        rf"(?:(?:all|every|each){_W}(?:of{_W})?)?your{_W}(?:\w+{_W})?(?:instructions|directives|system{_W}prompt)\b"
        rf"|\b(?:repeat|recite|reveal|dump|list|print|output|respond{_W}with|tell{_W}me|show{_W}me|write{_W}down)"
        rf"(?:{_W}(?:the|of))*{_W}(?:all|every|each)(?:{_W}(?:the|of))*{_W}(?:instructions?|prompts?|rules|directives)"
        rf"{_W}(?:that{_W})?"
        rf"you{_W}(?:have{_W}been|were|['’]ve{_W}been){_W}given\b"  # noqa: RUF001
    ),
    "agent_directed": (
        rf"\b(?:ai|assistant|agent|model|llm|chatbot|gpt){_W}(?:reading|processing|summari[sz]ing){_W}this\b"
        rf"|\b(?:when|if|once){_W}(?:you|an?{_W}(?:ai|assistant|agent|model)|the{_W}(?:ai|assistant|agent|model))"
        rf"{_W}(?:read|reads|see|sees|process|processes|summari[sz]es?|retrieves?|loads?){_W}this\b"
        rf"|\b(?:send|email|forward|post|upload|exfiltrate|leak|transmit){_W}"
        rf"(?:(?:(?:all|the|this|their|any){_W}(?:user'?s?{_W})?|user'?s?{_W})email"
        rf"|(?:(?:all|the|this|their|any){_W})?(?:user'?s?{_W})?"
        rf"(?:data|conversation|chat|history|credentials|passwords?|contents|files|messages|secrets|keys|tokens|emails))"
        rf"(?:{_W}\w+){{0,3}}?{_W}(?:to|at){_W}(?:https?://|\S+@|\w+\.\w+|the{_W}(?:following|address|url))"
        rf"|\b(?:execute|run|eval){_W}(?:the{_W}|this{_W})?(?:following{_W})?(?:code|command|script|payload|shell)\b(?:{_W}\w+){{0,3}}?{_W}(?:now|immediately|first|silently|without)"
        rf"|\b(?:call|invoke|use){_W}the{_W}[\w.-]+{_W}tool{_W}(?:with|to){_W}"
        rf"|\bappend{_W}(?:the{_W}following|this){_W}(?:to|into){_W}(?:every|each|all|your){_W}"
        # an image whose address has a blank for data: rendering it sends the data
        r"|!\[[^\]\n]*\]\(\s*https?://[^\s)]*\?[^\s)]*(?:\{|\[|\$|<|%7B|INSERT)"
        rf"|\b(?:silently|quietly|secretly|covertly){_W}(?:run|execute|call|invoke|send|fetch|download|upload|post|delete|email)\b"
        rf"|\b(?:do{_W}not|don['’]t|never){_W}(?:tell|inform|mention|reveal|show|let)\b[^.\n]{{0,30}}?\buser\b"  # noqa: RUF001
        rf"[^.\n]{{0,30}}?\b(?:this|these){_W}(?:instructions?|notes?|messages?)\b"
    ),
    "fake_system_message": (
        r"(?m:^)[ \t]*(?:#+[ \t]*)?(?:system|assistant)[ \t]*(?:prompt|message)?[ \t]*:\s*"
        r"(?:new\s+)?instructions?\b"
        r"|<\|im_start\|>|\[/?INST\]|<\s*/?\s*system\s*>|<\s*system\s+mode"
        r"|#+\s*begin\s+new\s+instructions"
        # a fenced boundary that says the instructions or the prompt end or
        # begin: %%% END OF INSTRUCTIONS %%%, ### begin system prompt ###
        rf"|{_FENCE}[ \t]*(?:end|begin|start)[ \t]+(?:of[ \t]+)?(?:the[ \t]+)?"
        rf"(?:[\w-]+[ \t]+){{0,3}}(?:instructions?|prompt|rules|context)[ \t]*{_FENCE}"
    ),
    "new_instructions": (
        rf"\b(?:new|updated|revised|real|actual){_W}instructions{_W}(?:are|follow|:)"
        rf"|\bnew{_W}instructions?{_W}(?:to|for){_W}(?:the{_W})?(?:\w+{_W})?"
        rf"(?:assistant|ai|model|llm|chatbot)\b"
    ),
    # Claiming to be the one the agent answers to, or switching it into a mode without rules.
    "authority_claim": (
        rf"\bi(?:{_W}am|['’]m){_W}(?:now{_W})?your{_W}(?:\w+{_W})?{_ROLES}\b"  # noqa: RUF001
        rf"|\b(?:this{_W}is|as){_W}your{_W}(?:\w+{_W})?{_MAKERS}\b"
        rf"|\bi{_W}am{_W}(?:a{_W})?god\b"
        rf"|\b(?:god|override|jailbreak){_W}mode\b"
        rf"|\bsafe(?:ty)?{_W}mode{_W}(?:is{_W})?(?:off|disabled|deactivated)\b"
    ),
    # Asking the agent for a password: outright, as a question, or disguised.
    "credential_request": (
        rf"\b(?:tell|give|send|share|reveal|disclose|leak)(?:(?:{_W}(?:me|us))?{_W}your|{_W}(?:me|us){_W}the)"
        rf"{_W}(?:\w+{_W})?(?:password|passphrase|passcode)s?\b"
        rf"|\bwhat(?:['’]s|{_W}is|{_W}was){_W}(?:your|the){_W}(?:secret{_W}|system{_W}|admin{_W})?"  # noqa: RUF001
        rf"(?:password|passphrase|passcode|secret{_W}(?:word|phrase|code))\s*\?"
        rf"|\b(?:letters?|syllables?)\b[^.\n]{{0,20}}?\b(?:of|in){_W}(?:the|your){_W}"
        rf"(?:secret{_W})?(?:password|passphrase|passcode)\b"
        rf"|\b(?:write|spell|say|give|print|output|translate|tell|type|reveal)(?:{_W}me)?{_W}(?:the|your){_W}"
        rf"(?:secret{_W})?(?:password|passphrase|passcode)(?:{_W}(?:in|as|into|using))?{_W}(?:an?{_W})?"
        rf"(?:\w+{_W})?"
        rf"{_OBFUSCATIONS}\b"
        rf"|{_FOREIGN_PASSWORD_QUESTION}"
    ),
}
# Persona names (DAN, STAN) match in capitals only: "Dan" is a colleague.
_COMPILED = {name: re.compile(pattern, re.I) for name, pattern in _PHRASES.items()}
# Most regions the gate below picks hold no phrase: one native pass says
# which can (multimatch.py), and only those are searched.
NATIVE = MultiMatch(_COMPILED)

_DISMISS_STEMS = ("ignor", "forget", "disregard", "overrid", "neglect", "skip", "drop", "abandon")
_DISMISS_STEMS += ("discard", "aside", "attention")
_ORDER_STEMS = ("instruction", "prompt", "rules", "direction", "directive", "guideline")
_ORDER_STEMS += ("guidance", "messages", "commands", "constraints", "orders", "context", "program")
_VOID_STEMS = ("longer", "void", "cancel", "obsolete", "revoked", "null", "ignored", "apply")
_VOID_STEMS += ("disregarded", "forgotten")
_EARLIER_STEMS = ("previous", "prior", "above", "earlier", "preced", "forego", "original")
_EARLIER_STEMS += ("initial", "system", "old", "all", "any", "every", "follow")
_DISCLOSE_STEMS = ("tell", "give", "send", "share", "reveal", "disclose", "leak")
_UNBOUND_STEMS = ("filter", "restriction", "limit", "rules", "guidelines", "censorship", "morals")
_UNBOUND_STEMS += ("ethics",)
_ROLE_STEMS = ("developer", "creator", "programmer", "maker", "owner", "admin", "god", "trainer")
_EXTRACT_STEMS = ("repeat", "recite", "reveal", "dump", "list", "print", "output", "show", "tell")
_PASSWORD_STEMS = ("password", "passphrase", "passcode")
_OBFUSCATION_STEMS = ("leet", "pig", "morse", "rot13", "reverse", "backwards", "emoji", "cipher")
_OBFUSCATION_STEMS += ("acrostic", "poem", "song", "story", "stories", "riddle", "another")
# What a rule cannot match without: alternatives, each a list of groups of
# which every one must have a word in the lowered text. Every match of a
# rule holds one of its alternatives, so a text that holds none is skipped
# without running the pattern; on ordinary text that skips most rules,
# which is most of the time a long write spends here.
_NEEDS: dict[str, tuple[tuple[tuple[str, ...], ...], ...]] = {
    "ignore_instructions": (
        (_DISMISS_STEMS, _EARLIER_STEMS, _ORDER_STEMS),
        (
            _DISMISS_STEMS,
            ("everything", "all", "what"),
            ("above", "before", "earlier", "previous", "said", "told"),
        ),
        (_ORDER_STEMS, _VOID_STEMS),
        (_DISMISS_STEMS, _ORDER_STEMS, ("given", "told")),
    ),
    "ignore_instructions_translated": (
        (_FOREIGN_DISMISS, _FOREIGN_ORDERS),
        (_FOREIGN_DISMISS, _FOREIGN_BEFORE),
    ),
    "disregard_safety": (
        (
            ("disregard", "ignor", "bypass", "disable", "turn", "circumvent", "remove", "without"),
            ("safety", "guardrail", "filter", "restriction", "censorship", "ethical", "polic"),
        ),
    ),
    "skip_approval": (
        (
            ("skip", "bypass", "circumvent", "ignor", "avoid"),
            ("approval", "review", "verification", "confirmation", "sign"),
        ),
        (("pretend",),),
    ),
    "no_confirmation": ((("approval", "confirmation", "permission"), ("ask", "wait")),),
    "role_override": (
        (
            ("you", "act", "pretend"),
            ("unrestricted", "unfiltered", "uncensored", "jailbroken", "evil", "amoral"),
        ),
        (("you", "act", "pretend"), ("unethical", "dan", "developer", "root", "without")),
        (("you", "act", "pretend"), ("different", "another")),
    ),
    "persona_jailbreak": (
        (("dan", "stan", "dude", "aim", "anything", "developer", "jailbroken", "immerse"),),
        (("free",), ("confines", "restrictions", "rules")),
        (("bound", "restricted", "limited"), ("not", "never", "longer")),
        (("character",), ("stay",)),
        (("now",), ("you",)),
        (_UNBOUND_STEMS, ("you",)),
    ),
    "prompt_extraction": (
        (
            ("repeat", "print", "reveal", "show", "output", "display", "dump", "recite", "spell"),
            ("initial", "original", "system", "hidden", "secret", "previous", "first", "full"),
            ("prompt", "instructions", "message", "text", "rules", "directives"),
        ),
        (
            ("write", "translate", "tell", "leak", "paste"),
            ("initial", "original", "system", "hidden", "secret", "previous", "first", "full"),
            ("prompt", "instructions", "message", "text", "rules", "directives"),
        ),
        (
            ("repeat", "print", "reveal", "show", "output", "display", "dump", "recite", "spell"),
            ("entire", "exact"),
            ("prompt", "instructions", "message", "text", "rules", "directives"),
        ),
        (
            ("write", "translate", "tell", "leak", "paste"),
            ("entire", "exact"),
            ("prompt", "instructions", "message", "text", "rules", "directives"),
        ),
        (
            ("repeat", "print", "output", "return", "write"),
            ("text", "words", "content", "everything"),
            ("above", "before", "far"),
        ),
        (("your",), ("prompt", "instructions")),
        ((*_EXTRACT_STEMS, "give"), ("your",), ("instructions", "directives", "prompt")),
        (("given",), ("instruction", "prompt", "rules", "directive")),
    ),
    "agent_directed": (
        (
            ("reading", "processing", "summari"),
            ("ai", "assistant", "agent", "model", "llm", "chatbot", "gpt"),
            ("this",),
        ),
        (
            ("read", "see", "process", "summari", "retriev", "load"),
            ("when", "if", "once"),
            ("this",),
        ),
        (
            ("send", "email", "forward", "post", "upload", "exfiltrate", "leak", "transmit"),
            ("data", "conversation", "chat", "history", "credential", "password", "contents"),
        ),
        (
            ("send", "email", "forward", "post", "upload", "exfiltrate", "leak", "transmit"),
            ("email",),
        ),
        (
            ("send", "email", "forward", "post", "upload", "exfiltrate", "leak", "transmit"),
            ("files", "messages", "secrets", "keys", "tokens"),
        ),
        (
            ("execute", "run", "eval"),
            ("code", "command", "script", "payload", "shell"),
            ("now", "immediately", "first", "silently", "without"),
        ),
        (("tool",), ("call", "invoke", "use")),
        (("append",),),
        (("![",),),
        (("silently", "quietly", "secretly", "covertly"),),
        (("instruction", "note", "message"), ("user",)),
    ),
    "fake_system_message": (
        (("im_start", "inst]", "begin"),),
        (("system",), ("<",)),
        (("system", "assistant"), ("instruction",)),
        (("instruction", "prompt", "rules", "context"),),
    ),
    "new_instructions": (
        (("new", "updated", "revised", "real", "actual"), ("instructions",)),
        (
            ("new",),
            ("instruction",),
            ("assistant", "ai", "model", "llm", "chatbot"),
        ),
    ),
    "authority_claim": (
        (_ROLE_STEMS, ("your",)),
        (("god",),),
        (("override", "jailbreak"),),
        (("safe",),),
    ),
    "credential_request": (
        (_PASSWORD_STEMS, _DISCLOSE_STEMS),
        (_PASSWORD_STEMS, ("what",)),
        (("secret",), ("what",)),
        (_PASSWORD_STEMS, ("letter", "syllable")),
        (_PASSWORD_STEMS, _OBFUSCATION_STEMS),
        (_folded(("passwort", "quel", "contrase", "senha", "password", "пароль")),),
        (("パスワードは何", "密码是什么"),),
    ),
}


prefilter.register(stem for alts in _NEEDS.values() for alt in alts for g in alt for stem in g)

# Each group of `_NEEDS` is a bit, and each alternative the bits of its
# groups: which groups a text holds is found once, from the stems it
# holds, and an alternative is then passed over with one test instead of
# a search of the text's stems per group.
_GROUP_BITS = {
    group: 1 << index
    for index, group in enumerate(
        dict.fromkeys(g for alts in _NEEDS.values() for alt in alts for g in alt)
    )
}
_STEM_GROUPS: dict[str, int] = {}
for _group, _bit in _GROUP_BITS.items():
    for _stem in _group:
        _STEM_GROUPS[_stem] = _STEM_GROUPS.get(_stem, 0) | _bit
_ALTERNATIVE_BITS = {
    rule: [sum({_GROUP_BITS[group] for group in alt}) for alt in alts]
    for rule, alts in _NEEDS.items()
}


# A line of separators only, as `_W` counts them.
_WORDLESS = re.compile(r"(?:[^\w\n]|_)*")


class _Held:
    """On which lines of a text each stem starts a word.

    A stem of ASCII letters is only ever needed at the start of a word
    (the rules open each word with a boundary or a separator; words split
    at underscores, as the rules' separators do), so its other occurrences
    ("skip" in "buttonskip") are dropped. Other stems ("<", "inst]", the
    words of other scripts) count wherever they are.

    A set of lines is an int with bit `n` set for line `n`: the gate
    unites, widens and intersects such sets for every rule, which on
    ints is one operation each, not one per line.
    """

    def __init__(self, scanned: prefilter.Scanned) -> None:
        self.scanned = scanned
        self._lines: dict[str, int] = {}
        self._groups: dict[tuple[str, ...], int] = {}
        self._near: dict[tuple[str, ...], int] = {}
        self.groups = 0  # the bits of the groups a stem of which is in the text
        for stem in scanned.hits:
            self.groups |= _STEM_GROUPS.get(stem, 0)

    @cached_property
    def line_starts(self) -> list[int]:
        """Where each line starts that holds a word. A line without one
        (blank, or punctuation only) belongs to the line before: the rules'
        separators (`_W`) run across it, so the words either side of a
        blank line are a phrase the gate must keep together."""
        starts, lowered = self.scanned.line_starts, self.scanned.lowered
        ends = [*(start - 1 for start in starts[1:]), len(lowered)]
        return [
            start
            for index, (start, end) in enumerate(zip(starts, ends, strict=True))
            if index == 0 or not _WORDLESS.fullmatch(lowered, start, end)
        ]

    def lines(self, stem: str) -> int:
        if stem not in self._lines:
            lowered, found = self.scanned.lowered, self.scanned.hits.get(stem, ())
            starts, lines = self.line_starts, 0
            word = stem.isascii() and stem.isalnum()
            for at in found:
                if not word or not at or not lowered[at - 1].isalnum():
                    lines |= 1 << (bisect_right(starts, at) - 1)
            self._lines[stem] = lines
        return self._lines[stem]

    def group_lines(self, group: tuple[str, ...]) -> int:
        if group not in self._groups:
            hits, lines = self.scanned.hits, 0
            for stem in group:
                if stem in hits:
                    lines |= self.lines(stem)
            self._groups[group] = lines
        return self._groups[group]

    def near_lines(self, group: tuple[str, ...]) -> int:
        """The lines that hold a word of `group`, and the lines either side of them.

        (Line -1 falls away, as the bit past the end would: only lines that
        hold an anchor are ever kept.)
        """
        if group not in self._near:
            found = self.group_lines(group)
            self._near[group] = found | found << 1 | found >> 1
        return self._near[group]


def _may_match(rule: str, held: _Held) -> bool:
    return any(all(held.group_lines(group) for group in alt) for alt in _NEEDS[rule])


def _regions(rule: str, held: _Held) -> list[tuple[int, int]]:
    """The lines around each place where a match of `rule` could be, merged.

    Every match holds a word of each group of one alternative, the first
    group's word within a line of the rest (the line before and after
    cover a phrase wrapped over lines). So only the lines around a word of
    the first group that have a word of every other group within a line
    are searched: in a long note "ignore" and "instructions" are both
    likely somewhere, rarely within a line of each other.
    """
    lines = 0
    for (anchors, *others), needed in zip(_NEEDS[rule], _ALTERNATIVE_BITS[rule], strict=True):
        if held.groups & needed != needed:
            continue  # a group none of whose stems is in the text, at a word start or not
        if not all(held.group_lines(group) for group in others):
            continue
        kept = held.group_lines(anchors)
        for group in others:
            kept &= held.near_lines(group)
        lines |= kept
    starts, end_of_text = held.line_starts, len(held.scanned.lowered)
    regions: list[tuple[int, int]] = []
    while lines:
        line = (lines & -lines).bit_length() - 1  # the lowest line left
        lines &= lines - 1
        start = starts[max(line - 1, 0)]
        end = starts[line + 2] - 1 if line + 2 < len(starts) else end_of_text
        if regions and start <= regions[-1][1]:
            regions[-1] = (regions[-1][0], end)
        else:
            regions.append((start, end))
    return regions


# Policy text forbids these acts ("never skip approval", "do not ignore
# previous alerts"); a negation right before the phrase makes it benign.
# Only the imperative rules are negatable: a role override never is.
_NEGATABLE = {"ignore_instructions", "disregard_safety", "skip_approval", "prompt_extraction"}
_NEGATABLE |= {"credential_request"}
_NEGATION_BEFORE = re.compile(
    r"\b(?:never|not|no|n't|cannot|mustn't|shouldn't|don't|won't|without)\s+(?:\w+\s+)?$", re.I
)


def _negated(text: str, start: int) -> bool:
    return bool(_NEGATION_BEFORE.search(text[max(0, start - 30) : start]))


def _injection_spans(text: str) -> list[Span]:
    """Rule hits; failing those, the classifier's verdict.

    A text whose only attack phrase is negated ("do not ignore previous
    instructions") is policy, so the classifier is not asked about it:
    its vocabulary is the attack's.
    """
    scanned = prefilter.scan(text)
    # Positions in `lowered` are the text's unless lower-casing changed its length.
    spans, negated = _rule_spans(text, scanned, gated=scanned.exact)
    if spans or negated:
        return spans
    return classifier_spans(text, words_of(scanned.lowered))


def _rule_spans(text: str, scanned: prefilter.Scanned, *, gated: bool) -> tuple[list[Span], bool]:
    """The rules' hits, and whether a negated phrase was passed over.

    Gated, each rule runs on those of its `_regions` where the native pass
    says it can match; otherwise on the whole text of any text that holds
    what it needs.
    """
    spans, negated = [], False
    held = _Held(scanned)
    ends = NATIVE.scan(text) if gated else EVERYWHERE
    for name, pattern in _COMPILED.items():
        if not ends.anywhere(name):
            continue
        if gated:
            regions = _regions(name, held)
        else:
            regions = [(0, len(text))] if _may_match(name, held) else []
        matches = (
            m
            for start, end in regions
            if ends.within(name, start, end)
            for m in pattern.finditer(text, start, end)
        )
        for match in matches:
            if name in _NEGATABLE and _negated(text, match.start()):
                negated = True
            else:
                spans.append(Span(f"prompt_injection.{name}", match.start(), match.end()))
    return spans, negated


DETECTORS = [Detector("injection", _injection_spans, tolerated_in_conversations=True)]
