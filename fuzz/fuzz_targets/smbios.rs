//! SMBIOS tables (`platform::smbios`): an entry point and a table from
//! firmware or `BWSCOPE_SMBIOS_DIR`, split where the first byte says.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = bwscope::platform::smbios::from_raw(data);
    if let Some((&cut, rest)) = data.split_first() {
        let cut = usize::from(cut).min(rest.len());
        let (entry, table) = rest.split_at(cut);
        let _ = bwscope::platform::smbios::decode(entry, table);
    }
});
