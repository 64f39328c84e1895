//! The fleet's join as a conversation (`cluster::wire`): one side is this
//! build's rank 0 (`admit`) or rank 1 (`join`), the other a script of
//! whatever bytes the fuzzer writes, over loopback. The first byte picks
//! the side and whether a token is held. A script never learns the MAC of
//! a nonce drawn for the join, so with a token neither side may accept.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&how, peer)) = data.split_first() else {
        return;
    };
    let as_rank_0 = how & 1 == 0;
    let token: Option<&[u8]> = (how & 2 != 0).then_some(b"fuzz-token".as_slice());
    let r = bwscope::cluster::wire::scripted_join(as_rank_0, token, peer);
    if token.is_some() {
        assert!(r.is_err(), "a script was accepted under a token");
    }
    if let Err(e) = r {
        // What the other side said reaches a terminal cleaned.
        assert!(!e.chars().any(bwscope::util::text::is_hostile), "{e:?}");
    }
});
