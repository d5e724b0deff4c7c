//! What went wrong in a YAML text, in fathom's words: the parser's and the
//! deserializer's errors (serde-saphyr's, serde's) turned into what was written and what
//! was expected there, never the libraries' own phrases (`expected u32`, `invalid type`,
//! `use from_str_multiple`), which name Rust types and functions a user never sees.
//! [`super::yaml`] puts the file, line and key in front.

use crate::suggest;
use serde_saphyr::granit_parser::ErrorKind;

/// A syntax error of the parser as what to fix. Kinds this does not name read as the
/// general advice at the end: the library's text is never shown.
pub fn syntax(kind: &ErrorKind) -> String {
    use ErrorKind as K;
    let said = match kind {
        K::MappingValueNotAllowed | K::InvalidColonPlacement | K::InvalidMappingValueWhitespace => {
            "a `:` where no value may start: quote a value that holds `: `, or line the key up with the keys beside it"
        }
        K::ExpectedBlockMappingKey | K::SimpleKeyExpected | K::InvalidSimpleKey | K::MappingKeyNotAllowed => {
            "expected `key: value` here: check the indentation and that each key ends with `:`"
        }
        K::InvalidIndentation | K::InvalidFlowScalarIndent | K::InvalidQuotedScalarIndent => {
            "the indentation does not match the lines around it"
        }
        K::ExpectedBlockSequenceEntry | K::BlockSequenceEntryNotAllowed | K::BlockEntryInFlowCollection => {
            "a list item (`- `) where none may start: line it up with the items beside it"
        }
        K::InvalidBlockEntryWhitespace => "a `-` that starts a list item must be followed by a space",
        K::TabNotAllowed | K::TabInBlockIndentation | K::TabInIndentation | K::TabAtBlockScalarStart => {
            "a tab where YAML takes spaces: indent with spaces"
        }
        K::TabInPlainScalar => "a tab in an unquoted value: quote the value",
        K::UnexpectedEofFlowSequence
        | K::UnexpectedEofFlowMapping
        | K::UnexpectedEofImplicitFlowMapping
        | K::UnclosedFlowCollection { .. } => "a `[` or `{` is not closed",
        K::ExpectedFlowMappingSeparator => "expected `,` or `}` after a value in `{ }`",
        K::ExpectedFlowSequenceSeparator => "expected `,` or `]` after an item in `[ ]`",
        K::MisplacedFlowCollectionEnd | K::MismatchedFlowCollectionEnd { .. } => {
            "a closing `]` or `}` that closes nothing, or the wrong one"
        }
        K::UnexpectedEofBlockSequence | K::UnexpectedEofBlockMapping | K::UnexpectedEof => {
            "the text ends in the middle of a value"
        }
        K::ExpectedWhitespace => "expected a space here",
        K::ZeroBlockScalarIndent | K::InvalidBlockScalarHeader | K::InvalidBlockScalarIndent => {
            "a `|` or `>` text block whose lines are not indented under its key"
        }
        K::RecursionLimitExceeded => "nested too deep",
        other => return marks(other),
    };
    said.to_string()
}

/// [`syntax`] for quotes, escapes, and the characters that mark something other than
/// a plain value (`@`, `*`, `!`, `---`, `%`).
fn marks(kind: &ErrorKind) -> String {
    use ErrorKind as K;
    let said = match kind {
        K::UnclosedQuotedScalar => "a quote is not closed",
        K::InvalidTrailingSingleQuotedScalar | K::InvalidTrailingDoubleQuotedScalar => {
            "text after a closing quote: quote the whole value"
        }
        K::UnknownQuotedScalarEscape
        | K::InvalidQuotedScalarHexEscape
        | K::InvalidLowSurrogateHexEscape
        | K::InvalidLowSurrogate
        | K::MissingLowSurrogate
        | K::UnpairedLowSurrogate
        | K::InvalidUnicodeEscape => {
            "an unknown `\\` escape in double quotes: write `\\\\` for a backslash, or use single quotes"
        }
        K::UnexpectedCharacter { character } => {
            return format!("{character:?} cannot start an unquoted value: quote the value");
        }
        K::PlainScalarStartsWithDashFlowIndicator | K::UnexpectedEndOfPlainScalar => {
            "an unquoted value that YAML reads otherwise: quote the value"
        }
        K::UnknownAnchor => "`*NAME` refers to no `&NAME` above it: quote a value that starts with `*`",
        K::MissingAnchorOrAliasName => "`&` or `*` without a name: quote a value that starts with them",
        K::ExpectedTagBang
        | K::UndeclaredTagHandle
        | K::InvalidGlobalTagCharacter
        | K::InvalidTagTerminator
        | K::MissingTagUri
        | K::UnclosedVerbatimTag
        | K::InvalidTagEscape
        | K::InvalidTagUtf8LeadingByte
        | K::InvalidTagUtf8TrailingByte
        | K::InvalidTagUtf8 => "a tag (`!NAME`) fathom does not read: quote a value that starts with `!`",
        K::ExpectedDocumentStart
        | K::InvalidDocumentEnd
        | K::MultipleDocumentsUnsupported
        | K::DocumentIndicatorInQuotedScalar
        | K::MissingDocumentEndBeforeDirective => {
            "a document marker (`---` or `...`) where fathom reads one document: remove it, or quote the value"
        }
        K::DirectiveDisallowed
        | K::DuplicateVersionDirective
        | K::UnsupportedYamlMajorVersion
        | K::DuplicateTagDirective
        | K::ExpectedTagDirectiveBang => "a `%` directive fathom does not read: remove it, or quote the value",
        K::BomInsideDocument => "a byte order mark inside the text: remove it",
        K::CommentNotSeparated | K::CommentInterceptedScalar => "a `#` comment must have a space before it",
        _ => "not YAML fathom can read: check the quotes, brackets and indentation here",
    };
    said.to_string()
}

/// The deserializer's error `e` as what was written and what was expected. `scalar` is
/// the text of the value it is at, if that is a scalar.
pub fn message(e: &serde_saphyr::Error, scalar: Option<&str>) -> String {
    use serde_saphyr::Error as E;
    // no scalar where one was expected: a collection was written
    let written = || scalar.map_or("a list or mapping".to_string(), shown);
    match innermost(e) {
        E::Message { msg, .. } => custom(msg),
        E::SerdeInvalidType { unexpected, expected, .. } | E::SerdeInvalidValue { unexpected, expected, .. } => {
            match scalar.map_or_else(|| unexpected_words(unexpected), shown) {
                nothing if nothing == "nothing" => format!("has no value: expected {}", expected_words(expected)),
                was => format!("expected {}, not {was}", expected_words(expected)),
            }
        }
        E::SerdeInvalidLength { len, expected, .. } => {
            format!("expected {}, not {len} items", expected_words(expected))
        }
        E::SerdeUnknownField { field, expected, .. } => {
            let hint = suggest::hint(field, expected.iter().copied());
            format!("unknown key `{field}`{hint}: {}", one_of(expected, "no keys are read here"))
        }
        E::SerdeUnknownVariant { variant, expected, .. } => {
            let hint = suggest::hint(variant, expected.iter().copied());
            format!("unknown choice `{variant}`{hint}: {}", one_of(expected, "there is no choice here"))
        }
        E::SerdeMissingField { field, .. } => format!("missing key `{field}`"),
        E::InvalidScalar { ty, .. } => format!("expected {}, not {}", expected_words(ty), written()),
        E::InvalidBooleanStrict { .. } => format!("expected true or false, not {}", written()),
        E::NullIntoString { .. } => "has no value: expected text".into(),
        E::NonFiniteFloat { value, .. } => format!("expected a finite number, not `{value}`"),
        E::Unexpected { expected, .. } => {
            format!("expected {}, not {}", expected_words(expected.trim_end_matches(" start")), written())
        }
        E::MultipleDocuments { .. } => "holds more than one YAML document (`---`): fathom reads one".into(),
        E::Eof { .. } => "holds no YAML document: expected `key: value` lines".into(),
        E::InvalidBinaryBase64 { .. } | E::BinaryNotUtf8 { .. } | E::TaggedScalarCannotDeserializeIntoString { .. } => {
            "a tagged value (`!!binary`, `!!str`) fathom does not read: write the value plainly, quoted if need be"
                .into()
        }
        E::UnknownAnchor { .. } => "`*NAME` refers to no `&NAME` above it: quote a value that starts with `*`".into(),
        E::DuplicateMappingKey { .. } => "a key is given twice in one mapping".into(),
        _ => format!("expected another kind of value here, not {}", written()),
    }
}

/// The error itself, without the source excerpts wrapped around it.
pub fn innermost(mut e: &serde_saphyr::Error) -> &serde_saphyr::Error {
    while let serde_saphyr::Error::WithSnippet { error, .. } = e {
        e = error;
    }
    e
}

/// A message a type's own reading gave (fathom's: "invalid duration `x`: expected ..."),
/// or serde's for an untagged enum, which names a Rust type.
fn custom(msg: &str) -> String {
    match msg.strip_prefix("data did not match any variant of untagged enum ") {
        Some(_) => "expected one value (text, a number or true/false), a list or a mapping, as the key takes".into(),
        None => msg.to_string(),
    }
}

/// A value as written, for "not ...": a number as it is, anything else quoted.
fn shown(text: &str) -> String {
    match text.parse::<f64>() {
        Ok(_) => format!("`{text}`"),
        Err(_) => format!("{text:?}"),
    }
}

/// What serde's `Unexpected` describes (`string "x"`, `integer `5``, `map`) as written.
fn unexpected_words(unexpected: &str) -> String {
    let (kind, value) = unexpected.split_once(' ').unwrap_or((unexpected, ""));
    match kind {
        "string" | "integer" | "boolean" | "character" => value.to_string(),
        "floating" => value.trim_start_matches("point ").to_string(),
        "map" => "a mapping".into(),
        "sequence" => "a list".into(),
        "unit" => "nothing".into(),
        _ => "this value".into(),
    }
}

/// What a type reading a value expects (serde's `expected` and `Expecting`, or
/// serde-saphyr's scalar type), for a person: `u32` is a whole number from 0 to
/// 4294967295. Fathom's own words (`a duration such as 30s or 5m`) pass through.
pub fn expected_words(expected: &str) -> String {
    let range = |max: u64| format!("a whole number from 0 to {max}");
    match expected.trim() {
        "u8" => range(u8::MAX.into()),
        "u16" => range(u16::MAX.into()),
        "u32" => range(u32::MAX.into()),
        "u64" | "usize" | "u128" => "a whole number of 0 or more".into(),
        "i8" | "i16" | "i32" | "i64" | "isize" | "i128" | "an integer" => "a whole number".into(),
        "f32" | "f64" | "floating point" | "a float" => "a number".into(),
        "a string" | "string" | "a borrowed string" | "str" | "scalar" | "string scalar" => "text".into(),
        "a boolean" | "boolean" | "bool" => "true or false".into(),
        "a character" | "char" => "one character".into(),
        "a map" | "map" | "mapping" | "a mapping" => "a mapping of `key: value`".into(),
        "a sequence" | "sequence" | "seq" => "a list".into(),
        "unit" | "null" => "nothing".into(),
        s if s.starts_with("struct ") => "a mapping of `key: value`".into(),
        s if s.starts_with("enum ") || s.starts_with("variant ") => "one of the choices this key takes".into(),
        s if s.starts_with("a tuple") || s.starts_with("tuple") => "a list".into(),
        s => s.to_string(),
    }
}

/// A list of names as people read it: "expected `a`", "expected one of `a`, `b`, `c`".
fn one_of(names: &[&str], none: &str) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    match &quoted[..] {
        [] => none.to_string(),
        [a] => format!("expected {a}"),
        [a, b] => format!("expected {a} or {b}"),
        _ => format!("expected one of {}", quoted.join(", ")),
    }
}
