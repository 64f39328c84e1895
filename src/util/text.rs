//! Text that came from somewhere else (another machine's host name, CPU
//! model or error message, a transponder's reply, a run file), made safe
//! to show on a terminal and to write into files that other programs read
//! line by line (`drain.txt`, `verdicts.txt`).
//!
//! One rule for every entry point: a character that moves the cursor,
//! starts a terminal escape, changes the text's direction or is
//! invisible is replaced by `�`, one for one, so columns stay aligned and
//! the reader can see that something was there. Any user can give a
//! machine such a name (`unshare -Ur --uts` then `hostname`), so nothing
//! that arrives over the wire is trusted to be one line of plain text.

/// The replacement shown for a character that was taken out.
pub const REPLACEMENT: char = '\u{fffd}';

/// The longest name (host name, CPU model, machine id) kept from another
/// machine, in characters: Linux host names have at most 64 bytes and
/// SMBIOS strings are short; anything longer is cut, saying so with `…`.
pub const NAME_MAX_CHARS: usize = 255;

/// The longest message (an error a peer reports) kept, in characters: a
/// peer's 60 KB line would otherwise fill the terminal.
pub const MESSAGE_MAX_CHARS: usize = 1000;

/// True for characters no text from elsewhere may carry onto a terminal
/// or into a line-based file, newline and tab aside: C0, DEL and C1
/// controls (ESC and 8-bit CSI start escapes that retitle or clear the
/// screen; BEL and CR hide or overwrite text), the bidirectional controls
/// (U+202A–U+202E, U+2066–U+2069, U+200E/U+200F, U+061C: they reorder
/// what is shown, "Trojan Source", CVE-2021-42574), zero-width characters
/// (U+200B–U+200D, U+2060–U+2064, U+FEFF: two names that look the same
/// but differ) and the Unicode line and paragraph separators (U+2028,
/// U+2029: some terminals and editors break the line there).
pub fn is_hostile(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(
            c,
            '\u{061c}'
                | '\u{200b}'..='\u{200f}'
                | '\u{2028}'..='\u{202e}'
                | '\u{2060}'..='\u{2064}'
                | '\u{2066}'..='\u{2069}'
                | '\u{feff}'
        )
}

/// `s` with every [`is_hostile`] character replaced by `�`; newlines and
/// tabs stay (for tables and multi-line text shown to a person).
pub fn printable(s: &str) -> std::borrow::Cow<'_, str> {
    if s.contains(is_hostile) {
        s.replace(is_hostile, "\u{fffd}").into()
    } else {
        s.into()
    }
}

/// `s` as one line: [`printable`], and newlines and tabs replaced too.
/// Every field written into a line-based file goes through this, so no
/// value can start a line of its own there.
pub fn one_line(s: &str) -> std::borrow::Cow<'_, str> {
    let bad = |c: char| is_hostile(c) || c == '\n' || c == '\t';
    if s.contains(bad) {
        s.replace(bad, "\u{fffd}").into()
    } else {
        s.into()
    }
}

/// A name from another machine (host name, CPU model, boot id, release):
/// one line, at most [`NAME_MAX_CHARS`] characters.
pub fn foreign_name(s: &str) -> String {
    cut(&one_line(s), NAME_MAX_CHARS)
}

/// A message from another machine or program (an error it reports): no
/// hostile character (newlines kept), at most [`MESSAGE_MAX_CHARS`].
pub fn foreign_message(s: &str) -> String {
    cut(&printable(s), MESSAGE_MAX_CHARS)
}

/// `s` cut to `max` characters, ending in `…` when it was longer.
fn cut(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        None => s.to_string(),
        Some(_) => {
            let keep: String = s.chars().take(max.saturating_sub(1)).collect();
            format!("{keep}…")
        }
    }
}

/// Every string of a JSON value (values and object keys) made
/// [`printable`]: what a peer sends is cleaned once, where it arrives,
/// before any of it is used. Not cut: a run's long strings are data;
/// the fields shown as messages are cut where they are decoded.
pub fn clean_value(v: &mut serde_json::Value) {
    use serde_json::Value;
    let fix = |s: &str| -> Option<String> {
        match printable(s) {
            std::borrow::Cow::Owned(o) => Some(o),
            std::borrow::Cow::Borrowed(_) => None,
        }
    };
    match v {
        Value::String(s) => {
            if let Some(o) = fix(s) {
                *s = o;
            }
        }
        Value::Array(a) => a.iter_mut().for_each(clean_value),
        Value::Object(m) => {
            if m.keys().any(|k| fix(k).is_some()) {
                let old = std::mem::take(m);
                m.extend(old.into_iter().map(|(k, v)| (fix(&k).unwrap_or(k), v)));
            }
            m.values_mut().for_each(clean_value);
        }
        _ => {}
    }
}

/// Serde's `deserialize_with` for a name from another machine: the
/// struct cannot hold the raw name, whoever decodes it.
pub fn de_foreign_name<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let s: String = serde::Deserialize::deserialize(d)?;
    Ok(foreign_name(&s))
}

/// Serde's `deserialize_with` for a message from another machine
/// ([`foreign_message`]).
pub fn de_foreign_message<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let s: String = serde::Deserialize::deserialize(d)?;
    Ok(foreign_message(&s))
}

/// [`de_foreign_name`] for an optional name.
pub fn de_foreign_name_opt<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<String>, D::Error> {
    let s: Option<String> = serde::Deserialize::deserialize(d)?;
    Ok(s.map(|s| foreign_name(&s)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bidi_zero_width_and_separators_are_replaced_one_for_one() {
        let s = "a\u{202e}b\u{2066}c\u{200b}d\u{2028}e\u{feff}f\u{1b}[2Jg";
        let p = printable(s);
        assert_eq!(p, "a�b�c�d�e�f�[2Jg");
        assert_eq!(p.chars().count(), s.chars().count());
        assert_eq!(printable("tab\tline\n"), "tab\tline\n");
        assert_eq!(one_line("x\nvictim-node-07\t"), "x�victim-node-07�");
    }

    #[test]
    fn names_are_one_line_and_cut() {
        assert_eq!(foreign_name("x\nvictim"), "x�victim");
        let long = "a".repeat(70_000);
        let n = foreign_name(&long);
        assert_eq!(n.chars().count(), NAME_MAX_CHARS);
        assert!(n.ends_with('…'));
        assert_eq!(foreign_message(&long).chars().count(), MESSAGE_MAX_CHARS);
        assert_eq!(foreign_name("node-01.example"), "node-01.example");
    }

    #[test]
    fn a_value_is_cleaned_keys_included() {
        let mut v = serde_json::json!({"h\u{1b}": ["x\u{202e}y", {"k": "\u{7}"}], "n": 1});
        clean_value(&mut v);
        assert_eq!(v, serde_json::json!({"h�": ["x�y", {"k": "�"}], "n": 1}));
    }
}
