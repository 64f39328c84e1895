//! What a fleet rank sends rank 0 (`cluster::wire`): a message's body as
//! the wire decodes it, and as rank 0 reads a hello, a node reply (its
//! run's plausibility check included) and a step reply.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(bwscope::cluster::wire::Wire::Join { id, .. }) =
        bwscope::cluster::wire::decode_msg(data)
    {
        // A name that came over the wire is one line, whatever was sent.
        assert!(!id.hostname.contains('\n'), "{:?}", id.hostname);
        assert!(!id.hostname.chars().any(bwscope::util::text::is_hostile));
    }
    bwscope::app::fleet::decode_rank_body(data);
});
