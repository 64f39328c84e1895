//! Property tests of the frame decoder: arbitrary bytes never make it
//! panic or claim more bytes than it was given, and every frame it accepts
//! re-encodes to exactly the bytes it consumed, or, where it cleaned a
//! peer's text, to a frame that decodes to itself.

use bwscope::net::protocol::{self, decode, encode, Frame, Mode, Setup, Way, HEADER, MAX_FRAME};
use proptest::prelude::*;

fn check(buf: &[u8]) {
    match decode(buf) {
        Ok(Some((f, used))) => {
            assert!(used >= HEADER && used <= buf.len() && used <= HEADER + MAX_FRAME);
            let again = encode(&f);
            if again[..] != buf[..used] {
                // A peer's text is cleaned where it is decoded (issue 42:
                // controls, bidi and zero-width characters never reach a
                // terminal), so such a frame is not the bytes it came
                // from; cleaning is then a fixed point: it decodes to
                // itself, whole.
                let (g, n) = decode(&again)
                    .expect("a re-encoded frame decodes")
                    .expect("a re-encoded frame is whole");
                assert_eq!(n, again.len());
                assert_eq!(format!("{g:?}"), format!("{f:?}"), "cleaning is not stable");
            }
        }
        Ok(None) => {
            // Only a short buffer may ask for more.
            if buf.len() >= HEADER {
                let len = u32::from_le_bytes([buf[0], buf[1], buf[2], buf[3]]) as usize;
                assert!(buf.len() < HEADER + len);
            }
        }
        Err(_) => {}
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4000, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(buf in proptest::collection::vec(any::<u8>(), 0..512)) {
        check(&buf);
    }

    /// Bytes that start with a plausible header (small length, known kind)
    /// reach the payload decoders, which plain random bytes rarely do.
    #[test]
    fn random_payloads_with_valid_headers_never_panic(
        kind in 1u8..=12,
        payload in proptest::collection::vec(any::<u8>(), 0..200),
        extra in proptest::collection::vec(any::<u8>(), 0..8),
        cut in 0usize..220,
    ) {
        let mut buf = (payload.len() as u32).to_le_bytes().to_vec();
        buf.push(kind);
        buf.extend_from_slice(&payload);
        buf.extend_from_slice(&extra);
        check(&buf);
        check(&buf[..cut.min(buf.len())]);
    }

    #[test]
    fn setups_roundtrip(
        mode in 0u8..2, dir in 0u8..3, streams: u16, chunk: u64,
        time_ms: u32, omit_ms: u32, bytes: u64, interval_ms: u32, last: bool,
    ) {
        let f = Frame::Setup(Setup {
            mode: [Mode::Rr, Mode::Stream][mode as usize],
            direction: [Way::Send, Way::Recv, Way::Bidir][dir as usize],
            streams, chunk_bytes: chunk, time_ms, omit_ms, bytes, interval_ms, last,
        });
        let b = encode(&f);
        prop_assert_eq!(decode(&b).unwrap(), Some((f, b.len())));
    }

    #[test]
    fn error_messages_roundtrip(m in ".{0,400}") {
        // What arrives is the peer's text made printable and bounded
        // (`util::text::foreign_message`); plain text comes through as sent.
        let clean = bwscope::util::text::foreign_message(&m);
        let b = encode(&Frame::Error(m));
        prop_assert_eq!(decode(&b).unwrap(), Some((Frame::Error(clean), b.len())));
    }
}

#[test]
fn header_limit_is_enforced_before_reading_the_payload() {
    let mut h = ((MAX_FRAME + 1) as u32).to_le_bytes().to_vec();
    h.push(1);
    assert!(matches!(
        decode(&h),
        Err(protocol::DecodeError::Oversized(_))
    ));
}
