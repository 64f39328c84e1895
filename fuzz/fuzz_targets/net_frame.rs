//! A transponder's or a leader's control frames (`net::protocol`): the
//! streaming decoder over any bytes, and every kind's payload decoder.
#![no_main]

use bwscope::net::protocol::{decode, decode_payload, encode};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // The stream decoder: frames one after another, as a socket gives them.
    let mut rest = data;
    while let Ok(Some((frame, used))) = decode(rest) {
        // What was decoded encodes again and decodes to the same frame
        // (the Error frame's text is already cleaned, so stays the same).
        let again = encode(&frame);
        assert_eq!(decode(&again).ok().flatten().map(|f| f.0), Some(frame));
        assert!(used > 0 && used <= rest.len());
        rest = &rest[used..];
    }
    if let Some((&kind, payload)) = data.split_first() {
        if let Ok(bwscope::net::protocol::Frame::Error(m)) = decode_payload(kind, payload) {
            assert!(!m.chars().any(bwscope::util::text::is_hostile), "{m:?}");
        }
    }
});
