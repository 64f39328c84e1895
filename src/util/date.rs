//! Dates and times a person gives (`history --since`, `history forget
//! --before`) and the start times a store holds, as instants: compared by
//! the moment they name, never as text (`2026-11-28T14:00:00+05:00` is
//! 09:00 UTC, not after `2026-11-28T12:39:00Z`). Parsed by `jiff` (a
//! maintained date library, with no time zone database here: UTC and
//! explicit offsets are all a stamp needs).
//!
//! The grammar: an RFC 3339 time with its offset (`Z` or `±hh:mm`;
//! seconds and fractions optional, as ISO 8601 allows), or a date alone
//! (`2026-11-01`: its midnight, UTC). Anything else is refused, a time
//! without an offset included: whose midnight it meant cannot be known.

pub use jiff::Timestamp;

/// What `flag`-style messages say the grammar is.
pub const EXPECTED: &str =
    "a date (2026-11-01, its midnight UTC) or an RFC 3339 time with its offset (2026-11-01T12:00:00Z, 2026-11-01T17:00:00+05:00)";

/// `s` as an instant (see the module comment); Err says what is wrong.
pub fn parse_instant(s: &str) -> Result<Timestamp, String> {
    if let Ok(t) = s.parse::<Timestamp>() {
        return Ok(t);
    }
    // A date alone: exactly YYYY-MM-DD (the date parser also takes a
    // date-time and drops its time, which is not what was asked).
    let date_alone = s.len() == 10 && s.as_bytes()[4] == b'-' && s.as_bytes()[7] == b'-';
    if date_alone {
        if let Ok(d) = s.parse::<jiff::civil::Date>() {
            return jiff::tz::Offset::UTC
                .to_timestamp(d.at(0, 0, 0, 0))
                .map_err(|e| format!("{s:?}: {e}"));
        }
    }
    let hint = if s.parse::<jiff::civil::DateTime>().is_ok() {
        " (a time needs its offset: Z for UTC)"
    } else {
        ""
    };
    Err(format!("{s:?} is not {EXPECTED}{hint}"))
}

/// An instant as RFC 3339 in UTC (`2026-11-01T12:00:00Z`): what
/// [`parse_instant`] reads back to the same instant.
pub fn stamp(t: Timestamp) -> String {
    t.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn secs(s: &str) -> i64 {
        parse_instant(s).unwrap().as_second()
    }

    #[test]
    fn offsets_are_honoured_and_dates_alone_are_midnight_utc() {
        assert_eq!(
            secs("2026-11-28T14:00:00+05:00"),
            secs("2026-11-28T09:00:00Z")
        );
        assert_eq!(secs("2026-11-28"), secs("2026-11-28T00:00:00Z"));
        assert!(secs("2026-11-28T14:00:00+05:00") < secs("2026-11-28T12:39:00Z"));
        assert_eq!(
            stamp(parse_instant("2026-11-28").unwrap()),
            "2026-11-28T00:00:00Z"
        );
    }

    #[test]
    fn the_rest_is_refused() {
        for bad in [
            "9999-99-99",
            "2026-13-45",
            "2026-11-29x",
            "2026-11-28 13:00",
            "2026-11-28T13:00:00",
            "",
            "yesterday",
            "2026-02-30",
            "20261128",
        ] {
            assert!(parse_instant(bad).is_err(), "{bad:?} was taken");
        }
        let e = parse_instant("2026-11-28 13:00").unwrap_err();
        assert!(e.contains("needs its offset"), "{e}");
    }

    proptest! {
        /// Whatever instant, written with whatever offset, reads back as
        /// itself; and what parses prints back to the same instant.
        #[test]
        fn an_instant_round_trips(
            s in -62_000_000_000i64..250_000_000_000,
            ns in 0i32..1_000_000_000,
            off_min in -(25 * 60 - 1)..(25 * 60 - 1i32),
        ) {
            let t = Timestamp::new(s, ns).unwrap();
            let off = jiff::tz::Offset::from_seconds(off_min * 60).unwrap();
            let text = t.display_with_offset(off).to_string();
            let back = parse_instant(&text).unwrap();
            prop_assert_eq!(back, t, "{}", text);
            prop_assert_eq!(parse_instant(&stamp(back)).unwrap(), t);
        }

        /// Any text either parses to an instant that prints back to
        /// itself, or is refused: never a panic.
        #[test]
        fn any_text_parses_to_a_round_trip_or_is_refused(s in "\\PC{0,40}") {
            if let Ok(t) = parse_instant(&s) {
                prop_assert_eq!(parse_instant(&stamp(t)).unwrap(), t);
            }
        }
    }
}
