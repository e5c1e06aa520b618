#!/usr/bin/env python3
"""Generate the synthetic toy parallel corpus in data/toy.

The source side is a small English-like SVO language; the target side is an
invented language ("Veltic") chosen so that a translation model must learn
real reordering and agreement:

  * SOV order with a sentence-level postpositional phrase between subject and
    object:  S V O [prep NP]  ->  S [NP postp] O ta [ne] [tense] V-agr
  * adjectives after the noun, in mirror order, numerals after the adjectives;
  * two noun classes (solar, lunar) that are arbitrary per noun, so articles
    and adjective endings (class x number) must be learned from the noun;
  * the verb ends in a person/number suffix agreeing with the subject, also
    in the past and future, where English shows no agreement;
  * an object marker "ta" after the object phrase; tense and negation are
    particles before the verb (English "will", "did not", "does not").

Every source sentence has exactly one translation, generated from the same
tree; the script checks this by keeping every pair it ever samples.

Stdlib only; the output is a pure function of --seed and the sizes.
"""

import argparse
import hashlib
import os
import random
import sys

# --- lexicon -----------------------------------------------------------------
# noun: (english singular, english plural, veltic stem, class)
# Class is deliberately not predictable from the stem's form.
NOUNS = [
    ("cat", "cats", "mirak", "S"),
    ("dog", "dogs", "vusa", "L"),
    ("bird", "birds", "pilo", "L"),
    ("horse", "horses", "kaval", "S"),
    ("cow", "cows", "bumi", "S"),
    ("mouse", "mice", "sori", "L"),
    ("fox", "foxes", "rekel", "L"),
    ("wolf", "wolves", "lupo", "S"),
    ("duck", "ducks", "nakka", "S"),
    ("lion", "lions", "leun", "L"),
    ("child", "children", "tiki", "S"),
    ("man", "men", "varo", "L"),
    ("woman", "women", "dama", "S"),
    ("girl", "girls", "nela", "L"),
    ("boy", "boys", "pobo", "S"),
    ("teacher", "teachers", "dokar", "L"),
    ("farmer", "farmers", "agri", "S"),
    ("king", "kings", "regu", "L"),
    ("queen", "queens", "sarin", "S"),
    ("friend", "friends", "amik", "S"),
    ("doctor", "doctors", "medo", "L"),
    ("baker", "bakers", "panet", "L"),
    ("house", "houses", "domu", "L"),
    ("garden", "gardens", "hortel", "S"),
    ("tree", "trees", "arbo", "S"),
    ("table", "tables", "mesa", "S"),
    ("river", "rivers", "flumo", "L"),
    ("box", "boxes", "kesta", "L"),
    ("park", "parks", "parko", "L"),
    ("bridge", "bridges", "ponti", "S"),
]

# adjective: (english, veltic stem); ending by class x number, see ADJ_ENDING.
ADJECTIVES = [
    ("big", "mag"), ("small", "pit"), ("red", "rud"), ("blue", "zel"),
    ("green", "verd"), ("old", "vek"), ("young", "jun"), ("happy", "fel"),
    ("sad", "trist"), ("black", "nor"), ("white", "blan"), ("tall", "alt"),
    ("quick", "rap"), ("lazy", "lent"),
]
ADJ_ENDING = {("S", "sg"): "u", ("S", "pl"): "us", ("L", "sg"): "a", ("L", "pl"): "as"}

DEF_ARTICLE = {("S", "sg"): "lo", ("S", "pl"): "los", ("L", "sg"): "ra", ("L", "pl"): "ras"}
INDEF_ARTICLE = {"S": "un", "L": "una"}

NUMERALS = [("two", "zon"), ("three", "tir"), ("four", "kev"), ("five", "pas")]

# verb: (base, 3sg present, past, veltic stem, transitive)
VERBS = [
    ("see", "sees", "saw", "vid", True),
    ("like", "likes", "liked", "am", True),
    ("follow", "follows", "followed", "sekv", True),
    ("find", "finds", "found", "trov", True),
    ("help", "helps", "helped", "help", True),
    ("watch", "watches", "watched", "gard", True),
    ("carry", "carries", "carried", "port", True),
    ("chase", "chases", "chased", "kas", True),
    ("hear", "hears", "heard", "aud", True),
    ("eat", "eats", "ate", "manj", True),
    ("sleep", "sleeps", "slept", "dorm", False),
    ("run", "runs", "ran", "kur", False),
    ("swim", "swims", "swam", "nat", False),
    ("sing", "sings", "sang", "kant", False),
    ("laugh", "laughs", "laughed", "rid", False),
    ("wait", "waits", "waited", "atend", False),
]
TRANSITIVE = [v for v in VERBS if v[4]]
INTRANSITIVE = [v for v in VERBS if not v[4]]

# person/number -> veltic verb suffix
VERB_SUFFIX = {"1sg": "i", "2sg": "es", "3sg": "a", "1pl": "im", "3pl": "an"}

# pronoun: (english subject, english object, veltic, person/number)
PRONOUNS = [
    ("i", "me", "mi", "1sg"),
    ("you", "you", "tu", "2sg"),
    ("he", "him", "el", "3sg"),
    ("she", "her", "ela", "3sg"),
    ("we", "us", "nos", "1pl"),
    ("they", "them", "zei", "3pl"),
]

PREPOSITIONS = [("in", "nai"), ("on", "sor"), ("near", "bek"), ("under", "dum"), ("with", "kon")]

OBJECT_MARKER = "ta"
RELATIVE_MARKER = ("that", "ke")
CONJUNCTION = ("and", "og")
NEGATION = "ne"
TENSE_PARTICLE = {"present": None, "past": "ka", "future": "sul"}

MIN_TOKENS, MAX_TOKENS = 3, 20


def veltic_plural(stem):
    return stem + ("n" if stem[-1] in "aeiou" else "en")


def english_indefinite(next_word):
    return "an" if next_word[0] in "aeiou" else "a"


# --- sampling ----------------------------------------------------------------
# A phrase is rendered straight into (english tokens, veltic tokens, person).


def sample_noun_phrase(rng, allow_relative):
    """Returns (english, veltic, person) for a full noun phrase."""
    eng_sg, eng_pl, stem, noun_class = rng.choice(NOUNS)
    determiner = rng.choices(["the", "a", "bare", "number", "the_number"],
                             weights=[50, 20, 10, 10, 10])[0]
    number = "sg" if determiner == "a" else (
        "pl" if determiner in ("bare", "number", "the_number") else rng.choice(["sg", "pl"]))
    adjective_count = rng.choices([0, 1, 2], weights=[50, 40, 10])[0]
    adjectives = rng.sample(ADJECTIVES, adjective_count)
    numeral = rng.choice(NUMERALS) if determiner in ("number", "the_number") else None

    eng = []
    if determiner in ("the", "the_number"):
        eng.append("the")
    if numeral:
        eng.append(numeral[0])
    eng += [a[0] for a in adjectives]
    eng.append(eng_sg if number == "sg" else eng_pl)
    if determiner == "a":
        eng.insert(0, english_indefinite(eng[0]))

    vel = []
    if determiner in ("the", "the_number"):
        vel.append(DEF_ARTICLE[(noun_class, number)])
    elif determiner == "a":
        vel.append(INDEF_ARTICLE[noun_class])
    vel.append(stem if number == "sg" else veltic_plural(stem))
    vel += [a[1] + ADJ_ENDING[(noun_class, number)] for a in reversed(adjectives)]
    if numeral:
        vel.append(numeral[1])

    person = "3" + number
    if allow_relative and rng.random() < 0.06:
        rel_eng, rel_vel = sample_relative_clause(rng, person)
        eng += rel_eng
        vel += rel_vel
    return eng, vel, person


def sample_relative_clause(rng, head_person):
    """Subject relative: 'that V [O]' -> 'ke [O ta] V-agr' (no further nesting)."""
    verb = rng.choice(TRANSITIVE if rng.random() < 0.6 else INTRANSITIVE)
    tense, negated = sample_tense(rng)
    eng_verb, vel_verb = render_verb(verb, head_person, tense, negated)
    eng = [RELATIVE_MARKER[0]] + eng_verb
    vel = [RELATIVE_MARKER[1]]
    if verb[4]:
        obj_eng, obj_vel = sample_object(rng, allow_relative=False)
        eng += obj_eng
        vel += obj_vel
    vel += vel_verb
    return eng, vel


def sample_subject(rng, allow_relative):
    if rng.random() < 0.25:
        eng_subj, _, vel, person = rng.choice(PRONOUNS)
        return [eng_subj], [vel], person
    return sample_noun_phrase(rng, allow_relative)


def sample_object(rng, allow_relative):
    """Object phrase in English and Veltic, the latter already case-marked."""
    if rng.random() < 0.15:
        _, eng_obj, vel, _ = rng.choice(PRONOUNS)
        return [eng_obj], [vel, OBJECT_MARKER]
    eng, vel, _ = sample_noun_phrase(rng, allow_relative)
    return eng, vel + [OBJECT_MARKER]


def sample_tense(rng):
    tense = rng.choices(["present", "past", "future"], weights=[50, 30, 20])[0]
    return tense, rng.random() < 0.15


def render_verb(verb, person, tense, negated):
    """English verb group and Veltic '[ne] [tense] stem-agr'."""
    base, third_singular, past, stem, _ = verb
    if tense == "future":
        eng = ["will", "not", base] if negated else ["will", base]
    elif tense == "past":
        eng = ["did", "not", base] if negated else [past]
    else:
        agrees_3sg = person == "3sg"
        if negated:
            eng = ["does" if agrees_3sg else "do", "not", base]
        else:
            eng = [third_singular if agrees_3sg else base]
    vel = []
    if negated:
        vel.append(NEGATION)
    if TENSE_PARTICLE[tense]:
        vel.append(TENSE_PARTICLE[tense])
    vel.append(stem + VERB_SUFFIX[person])
    return eng, vel


def sample_clause(rng):
    """Main clause: S V [O] [PP]  ->  S [PP] [O ta] V."""
    transitive = rng.random() < 0.7
    verb = rng.choice(TRANSITIVE if transitive else INTRANSITIVE)
    subj_eng, subj_vel, person = sample_subject(rng, allow_relative=True)
    tense, negated = sample_tense(rng)
    verb_eng, verb_vel = render_verb(verb, person, tense, negated)

    obj_eng, obj_vel, object_has_relative = [], [], False
    if transitive:
        obj_eng, obj_vel = sample_object(rng, allow_relative=True)
        object_has_relative = RELATIVE_MARKER[0] in obj_eng

    # A PP after an object relative clause could attach to either verb; never
    # generate that, so each source sentence has one reading.
    pp_eng, pp_vel = [], []
    if not object_has_relative and rng.random() < 0.25:
        prep_eng, postp_vel = rng.choice(PREPOSITIONS)
        np_eng, np_vel, _ = sample_noun_phrase(rng, allow_relative=False)
        pp_eng, pp_vel = [prep_eng] + np_eng, np_vel + [postp_vel]

    eng = subj_eng + verb_eng + obj_eng + pp_eng
    vel = subj_vel + pp_vel + obj_vel + verb_vel
    return eng, vel


def sample_sentence(rng):
    eng, vel = sample_clause(rng)
    if rng.random() < 0.04:
        eng2, vel2 = sample_clause(rng)
        eng += [CONJUNCTION[0]] + eng2
        vel += [CONJUNCTION[1]] + vel2
    return " ".join(eng + ["."]), " ".join(vel + ["."])


# --- corpus ------------------------------------------------------------------


def generate(seed, sizes):
    """Returns ({split: [(src, tgt), ...]}, repeats), all sources distinct."""
    rng = random.Random(seed)
    repeats = 0  # sentences sampled again; each must translate the same way
    total = sum(sizes.values())
    translation_of = {}
    order = []
    attempts = 0
    while len(order) < total:
        attempts += 1
        if attempts > 50 * total:
            sys.exit("make_toy_corpus: too few distinct sentences; grammar too small")
        src, tgt = sample_sentence(rng)
        n_src, n_tgt = len(src.split()), len(tgt.split())
        if not (MIN_TOKENS <= n_src <= MAX_TOKENS and MIN_TOKENS <= n_tgt <= MAX_TOKENS):
            continue
        known = translation_of.get(src)
        if known is not None:
            assert known == tgt, f"ambiguous source {src!r}: {known!r} vs {tgt!r}"
            repeats += 1
            continue
        translation_of[src] = tgt
        order.append(src)

    splits, start = {}, 0
    for name, count in sizes.items():
        splits[name] = [(s, translation_of[s]) for s in order[start:start + count]]
        start += count
    return splits, repeats


def render_files(splits):
    """Returns {file name: bytes}."""
    files = {}
    for name, pairs in splits.items():
        files[f"{name}.src"] = "".join(s + "\n" for s, _ in pairs).encode("utf-8")
        files[f"{name}.tgt"] = "".join(t + "\n" for _, t in pairs).encode("utf-8")
    return files


def check(splits, sizes):
    for name, pairs in splits.items():
        assert len(pairs) == sizes[name], f"{name}: {len(pairs)} pairs, want {sizes[name]}"
        for src, tgt in pairs:
            for line in (src, tgt):
                assert line and line == line.strip() and "  " not in line, f"bad line {line!r}"
                assert "\n" not in line and "\t" not in line
                assert MIN_TOKENS <= len(line.split()) <= MAX_TOKENS, f"length of {line!r}"
                assert line == line.lower()
    sources = {name: {s for s, _ in pairs} for name, pairs in splits.items()}
    names = list(splits)
    for i, a in enumerate(names):
        assert len(sources[a]) == len(splits[a]), f"{a}: duplicate sources"
        for b in names[i + 1:]:
            assert not sources[a] & sources[b], f"{a} and {b} share sentences"


def vocabulary(pairs, side):
    return {tok for pair in pairs for tok in pair[side].split()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="data/toy", help="output folder (default data/toy)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--train", type=int, default=10000)
    parser.add_argument("--valid", type=int, default=500)
    parser.add_argument("--test", type=int, default=500)
    args = parser.parse_args()

    sizes = {"train": args.train, "valid": args.valid, "test": args.test}
    splits, repeats = generate(args.seed, sizes)
    check(splits, sizes)
    files = render_files(splits)
    # Same seed, same bytes: guard against any hidden nondeterminism
    # (set/dict iteration over strings, hash randomisation).
    again = render_files(generate(args.seed, sizes)[0])
    for name, data in files.items():
        assert hashlib.md5(again[name]).digest() == hashlib.md5(data).digest(), f"{name} not deterministic"

    os.makedirs(args.out, exist_ok=True)
    for name, data in files.items():
        with open(os.path.join(args.out, name), "wb") as f:
            f.write(data)
        print(f"{os.path.join(args.out, name)}  {len(data.splitlines()):6d} lines  "
              f"{len(data):8d} bytes  md5 {hashlib.md5(data).hexdigest()}")

    print(f"{repeats} sentences were sampled more than once, each with the same translation")
    all_pairs = [p for pairs in splits.values() for p in pairs]
    train = splits["train"]
    for side, label in ((0, "src"), (1, "tgt")):
        lengths = [len(p[side].split()) for p in all_pairs]
        print(f"{label}: vocabulary {len(vocabulary(all_pairs, side))} words "
              f"(train {len(vocabulary(train, side))}), "
              f"tokens/sentence mean {sum(lengths) / len(lengths):.1f} "
              f"min {min(lengths)} max {max(lengths)}")
    for side, label in ((0, "src"), (1, "tgt")):
        unseen = vocabulary(splits["test"], side) - vocabulary(train, side)
        assert not unseen, f"test {label} words missing from train: {sorted(unseen)}"


if __name__ == "__main__":
    main()
