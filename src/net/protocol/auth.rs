//! Authentication and secrets: the HMAC answer to the server's challenge
//! and the kernel randomness behind nonces and test cookies.

use hmac::{Hmac, Mac};
use sha2::Sha256;

use super::NONCE_LEN;

/// The label of a client's (a leader's, a rank's) answer.
const CLIENT: &[u8] = b"bwscope-net-auth-v1";
/// The label of a fleet rank 0's answer to a rank: another label, so an
/// answer can never be reflected from one direction into the other.
pub const SERVER_LABEL: &[u8] = b"bwscope-fleet-rank0-proof-v1";

fn keyed(token: &[u8], label: &[u8], nonce: &[u8; NONCE_LEN]) -> Hmac<Sha256> {
    let mut m = <Hmac<Sha256> as Mac>::new_from_slice(token).expect("HMAC accepts any key length");
    m.update(label);
    m.update(nonce);
    m
}

/// The answer to a challenge: HMAC-SHA256 keyed with the token over a
/// domain label and the server's nonce. The token itself never travels.
pub fn auth_mac(token: &[u8], nonce: &[u8; NONCE_LEN]) -> [u8; NONCE_LEN] {
    auth_mac_as(CLIENT, token, nonce)
}

/// [`auth_mac`] under another domain label.
pub fn auth_mac_as(label: &[u8], token: &[u8], nonce: &[u8; NONCE_LEN]) -> [u8; NONCE_LEN] {
    keyed(token, label, nonce).finalize().into_bytes().into()
}

/// Check an answer in constant time.
pub fn auth_ok(token: &[u8], nonce: &[u8; NONCE_LEN], mac: &[u8; NONCE_LEN]) -> bool {
    auth_ok_as(CLIENT, token, nonce, mac)
}

/// [`auth_ok`] under another domain label.
pub fn auth_ok_as(
    label: &[u8],
    token: &[u8],
    nonce: &[u8; NONCE_LEN],
    mac: &[u8; NONCE_LEN],
) -> bool {
    keyed(token, label, nonce).verify_slice(mac).is_ok()
}

/// Unpredictable bytes from the system (nonces, cookies).
pub fn random_bytes<const N: usize>() -> [u8; N] {
    let mut a = [0u8; N];
    if crate::os::random::fill(&mut a).is_err() {
        // The system's generator cannot fail with a valid buffer; as a last
        // resort mix the clock so a nonce is at least never constant.
        let mut g = crate::util::rng::XorShift64::new(crate::os::random::u64());
        for b in &mut a {
            *b = g.next_u64() as u8;
        }
    }
    a
}
