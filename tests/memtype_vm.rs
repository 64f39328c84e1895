//! WC/UC device memory end to end in a QEMU (TCG) guest: Debian's kernel,
//! a busybox initramfs with a static bwscope, and an `ivshmem-plain` device
//! whose prefetchable BAR 2 is backed by a /dev/shm file on the host.
//!
//! Checked: the refusals (disabled device, register BAR, no confirmation,
//! size over the BAR), the mappings (`resource2` → uncached-minus,
//! `resource2_wc` → write-combining, from the guest kernel's PAT list),
//! the data read back in the guest, and the same bytes seen on the host
//! through the backing file. With Debian's bochs DRM module loaded (a
//! `-device VGA`), also a DRM dumb buffer on /dev/dri/card0 and /dev/fb0. TCG does not model memory types, so speeds
//! are not asserted.
//!
//! Skips with a message when QEMU, busybox-static, cpio or the kernel are
//! missing. Scripts: tests/vm-memtype/.

// Unix: signals, /proc, namespaces, guests, device nodes or Unix-only
// tools (the Windows build runs tests/windows.rs instead).
#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::process::Command;

fn have(cmd: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {cmd} >/dev/null")])
        .status()
        .is_ok_and(|s| s.success())
}

fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/vm-memtype")
        .join(name)
}

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"))
}

#[test]
fn device_wc_and_uc_in_a_qemu_guest() {
    for (cmd, pkg) in [("qemu-system-x86_64", "qemu-system-x86"), ("cpio", "cpio")] {
        if !have(cmd) {
            eprintln!("skipping: {cmd} not found (apt-get install --no-install-recommends {pkg})");
            return;
        }
    }
    if !Path::new("/bin/busybox").exists() {
        eprintln!("skipping: /bin/busybox not found (apt-get install busybox-static)");
        return;
    }
    let cache = std::env::var("BWSCOPE_VM_CACHE").unwrap_or_else(|_| "/var/tmp/bwscope-vm".into());
    let k = Command::new(script("get-kernel.sh"))
        .arg(&cache)
        .output()
        .unwrap();
    if !k.status.success() {
        eprintln!(
            "skipping: no guest kernel: {}",
            String::from_utf8_lossy(&k.stderr).trim()
        );
        return;
    }
    let kernel = String::from_utf8_lossy(&k.stdout).trim().to_string();
    let b = Command::new(script("build-static.sh"))
        .arg(target_dir().join("vm-static"))
        .env_remove("RUSTFLAGS")
        .output()
        .unwrap();
    assert!(
        b.status.success(),
        "static build failed: {}",
        String::from_utf8_lossy(&b.stderr)
    );
    let bin = String::from_utf8_lossy(&b.stdout).trim().to_string();

    let work = tempfile::tempdir().unwrap();
    let shm = format!("/dev/shm/bwscope-ivshmem-{}", std::process::id());
    let out = Command::new(script("run.sh"))
        .args([&bin, &kernel, &shm, work.path().to_str().unwrap()])
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&out.stdout).to_string();
    let host_bytes = std::fs::read(&shm);
    let _ = std::fs::remove_file(&shm);
    assert!(
        out.status.success(),
        "qemu failed: {}\n{log}",
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!("{log}");
    assert!(
        log.contains("BWSCOPE-VM: ivshmem at"),
        "no ivshmem device in the guest:\n{log}"
    );

    // Refusals, each exit 2 with a message naming the cause.
    for (name, needle) in [
        ("disabled", "is disabled"),
        ("bar0", "non-prefetchable"),
        ("noconfirm", "--allow-device-writes"),
        ("toolarge", "--size"),
    ] {
        let line = log
            .lines()
            .find(|l| l.starts_with(&format!("BWSCOPE-VM: {name}-rc=")))
            .unwrap_or_else(|| panic!("no {name} line:\n{log}"));
        assert!(line.contains(&format!("{name}-rc=2 ")), "{line}");
        assert!(line.contains(needle), "{line}");
    }

    // The measured run.
    let begin = log.find("BWSCOPE-JSON-BEGIN").expect("JSON begin marker");
    let end = log.find("BWSCOPE-JSON-END rc=").expect("JSON end marker");
    assert!(
        log[end..].starts_with("BWSCOPE-JSON-END rc=0"),
        "{}",
        &log[end..]
    );
    let json = &log[begin + "BWSCOPE-JSON-BEGIN".len()..end];
    let run: serde_json::Value =
        serde_json::from_str(json.trim()).unwrap_or_else(|e| panic!("{e}: {json}"));
    let recs = run["records"].as_array().unwrap();
    let kinds: Vec<&str> = recs
        .iter()
        .map(|r| r["memory"]["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["regular", "device-uc", "device-wc"]);
    for (r, pat, file) in [
        (&recs[1], "uncached-minus", "resource2"),
        (&recs[2], "write-combining", "resource2_wc"),
    ] {
        assert_eq!(
            r["status"], "ok",
            "{}: {}\n{r}",
            r["memory"]["kind"], r["reason"]
        );
        assert_eq!(r["extra"]["data_verified"], true);
        assert_eq!(r["extra"]["pat_type"], pat, "{r}");
        assert!(r["extra"]["case_device"].as_str().unwrap().ends_with(file));
        assert!(r["extra"]["phys_start"].as_u64().is_some());
        assert_eq!(r["samples"].as_array().unwrap().len(), 3);
        assert!(r["extra"]["read_gbps"]["best"].as_f64().unwrap() > 0.0);
    }

    // DRM dumb buffer and fbdev (bochs): when the driver was loaded.
    match (
        log.find("BWSCOPE-DRM-BEGIN"),
        log.find("BWSCOPE-DRM-END rc="),
    ) {
        (Some(b), Some(e)) => {
            assert!(
                log[e..].starts_with("BWSCOPE-DRM-END rc=0"),
                "{}",
                &log[e..]
            );
            let run: serde_json::Value =
                serde_json::from_str(log[b + "BWSCOPE-DRM-BEGIN".len()..e].trim()).unwrap();
            let recs = run["records"].as_array().unwrap();
            let kinds: Vec<&str> = recs
                .iter()
                .map(|r| r["memory"]["kind"].as_str().unwrap())
                .collect();
            assert_eq!(kinds, ["regular", "device-dumb", "device-fb"]);
            for r in &recs[1..] {
                assert_eq!(
                    r["status"], "ok",
                    "{}: {}\n{r}",
                    r["memory"]["kind"], r["reason"]
                );
                assert_eq!(r["extra"]["data_verified"], true);
                // Neither exposes a physical address: said, not guessed.
                assert!(r["extra"]["pat_type"].is_null());
                assert!(r["extra"]["pat_note"]
                    .as_str()
                    .unwrap()
                    .contains("physical address"));
            }
        }
        _ => {
            let kmod = Path::new(&kernel).with_file_name("kmod").join("bochs.ko");
            assert!(
                !kmod.exists(),
                "bochs.ko was packed but the guest has no /dev/dri/card0:\n{log}"
            );
            eprintln!(
                "note: no bochs DRM driver beside the kernel, dumb-buffer and fbdev checks not run"
            );
        }
    }

    // The host sees what the guest wrote: the source array, 4 MiB of
    // bwscope's buffer fill from its seed.
    let bytes = host_bytes.expect("backing file");
    let n = 4 << 20;
    let mut want = vec![0u64; n / 8];
    bwscope::util::rng::fill_words(&mut want, 0x5eed);
    let mismatch = bytes[..n]
        .chunks_exact(8)
        .zip(&want)
        .position(|(w, &x)| u64::from_ne_bytes(w.try_into().unwrap()) != x);
    assert_eq!(mismatch, None, "host copy differs at word {:?}", mismatch);
    assert!(
        bytes[n..].iter().all(|&b| b == 0),
        "nothing written past --size"
    );
}
