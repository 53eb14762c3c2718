//! The benchmarks' global allocator (issue 42, point 7): glibc malloc, mimalloc or jemalloc,
//! chosen once per process by `KUBEGEN_BENCH_ALLOC=glibc|mimalloc|jemalloc` (glibc when
//! unset), so one bench binary measures the same workload under each of them.
//!
//! ```ignore
//! #[global_allocator]
//! static ALLOC: kubegen_bench_alloc::Dispatch = kubegen_bench_alloc::Dispatch;
//! ```
//!
//! The choice is made on the process's first allocation (before `main`'s first line, on the
//! only thread there is then) by reading the variable with `libc::getenv`, which does not
//! allocate; it never changes afterwards, so every block is freed by the allocator that
//! made it. A value that is none of the three names falls back to glibc: a bench checks
//! the variable itself with [`check_env`] and refuses to run.
//!
//! The cost of dispatching: one relaxed load of a static byte and a three-way branch per
//! allocation, reallocation and free, always taken the same way (the branch predictor
//! learns it at once); the allocators' own functions are calls into C either way.
//! glibc through [`Dispatch`] is the plain `std::alloc::System`.
//!
//! Not part of kubegen: the library stays allocator-neutral (a binary picks its global
//! allocator). This crate exists only because the workspace forbids `unsafe_code` and a
//! `GlobalAlloc` cannot be written without it.

use std::{
    alloc::{GlobalAlloc, Layout, System},
    ffi::CStr,
    sync::atomic::{AtomicU8, Ordering},
};

use mimalloc::MiMalloc;
use tikv_jemallocator::Jemalloc;

/// The environment variable that picks the allocator.
pub const ENV: &str = "KUBEGEN_BENCH_ALLOC";

/// One of the allocators [`Dispatch`] can forward to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    /// glibc's malloc (`std::alloc::System`), Rust's default on Linux.
    Glibc,
    /// mimalloc (the `mimalloc` crate, its bundled v2 build).
    Mimalloc,
    /// jemalloc (the `tikv-jemallocator` crate, prefixed symbols: glibc's malloc stays
    /// glibc's for C code).
    Jemalloc,
}

impl Choice {
    /// Every choice, in the order benches report them.
    pub const ALL: [Choice; 3] = [Choice::Glibc, Choice::Mimalloc, Choice::Jemalloc];

    /// The name `KUBEGEN_BENCH_ALLOC` uses.
    pub fn name(self) -> &'static str {
        match self {
            Choice::Glibc => "glibc",
            Choice::Mimalloc => "mimalloc",
            Choice::Jemalloc => "jemalloc",
        }
    }

    /// The choice `name` names, if any.
    pub fn from_name(name: &[u8]) -> Option<Choice> {
        Choice::ALL
            .into_iter()
            .find(|c| c.name().as_bytes() == name)
    }

    fn code(self) -> u8 {
        match self {
            Choice::Glibc => GLIBC,
            Choice::Mimalloc => MIMALLOC,
            Choice::Jemalloc => JEMALLOC,
        }
    }
}

const UNSET: u8 = 0;
const GLIBC: u8 = 1;
const MIMALLOC: u8 = 2;
const JEMALLOC: u8 = 3;

static CHOICE: AtomicU8 = AtomicU8::new(UNSET);

/// The allocator this process uses (reads the variable if nothing has allocated yet).
pub fn chosen() -> Choice {
    match code() {
        MIMALLOC => Choice::Mimalloc,
        JEMALLOC => Choice::Jemalloc,
        _ => Choice::Glibc,
    }
}

/// Panics unless `KUBEGEN_BENCH_ALLOC` is unset or names one of [`Choice::ALL`] (the
/// allocator itself cannot report a typo: it must not allocate, let alone panic).
pub fn check_env() {
    if let Some(value) = std::env::var_os(ENV) {
        let known = Choice::from_name(value.as_encoded_bytes()).is_some();
        assert!(
            known,
            "{ENV}={} is none of glibc, mimalloc, jemalloc",
            value.to_string_lossy()
        );
    }
}

#[inline(always)]
fn code() -> u8 {
    match CHOICE.load(Ordering::Relaxed) {
        UNSET => init(),
        c => c,
    }
}

#[cold]
#[inline(never)]
fn init() -> u8 {
    // SAFETY: the name is NUL-terminated; getenv reads `environ` without allocating. The
    // first allocation happens before any thread other than the main one exists, so no
    // `setenv` can run beside it.
    let value = unsafe { libc::getenv(c"KUBEGEN_BENCH_ALLOC".as_ptr()) };
    let choice = if value.is_null() {
        Choice::Glibc
    } else {
        // SAFETY: getenv returned a NUL-terminated string that lives as long as `environ`.
        let bytes = unsafe { CStr::from_ptr(value) }.to_bytes();
        Choice::from_name(bytes).unwrap_or(Choice::Glibc)
    };
    match CHOICE.compare_exchange(UNSET, choice.code(), Ordering::Relaxed, Ordering::Relaxed) {
        Ok(_) => choice.code(),
        Err(first) => first,
    }
}

/// The global allocator that forwards to the [`chosen`] one.
#[derive(Debug, Clone, Copy, Default)]
pub struct Dispatch;

// SAFETY: every method forwards to the same allocator for the whole life of the process
// (the choice never changes once made), and each of the three upholds GlobalAlloc's
// contract; the caller's obligations pass through unchanged.
unsafe impl GlobalAlloc for Dispatch {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded as received (see the impl).
        unsafe {
            match code() {
                MIMALLOC => MiMalloc.alloc(layout),
                JEMALLOC => Jemalloc.alloc(layout),
                _ => System.alloc(layout),
            }
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded as received (see the impl).
        unsafe {
            match code() {
                MIMALLOC => MiMalloc.alloc_zeroed(layout),
                JEMALLOC => Jemalloc.alloc_zeroed(layout),
                _ => System.alloc_zeroed(layout),
            }
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded as received; `ptr` came from the same allocator (see the impl).
        unsafe {
            match code() {
                MIMALLOC => MiMalloc.dealloc(ptr, layout),
                JEMALLOC => Jemalloc.dealloc(ptr, layout),
                _ => System.dealloc(ptr, layout),
            }
        }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded as received; `ptr` came from the same allocator (see the impl).
        unsafe {
            match code() {
                MIMALLOC => MiMalloc.realloc(ptr, layout, new_size),
                JEMALLOC => Jemalloc.realloc(ptr, layout, new_size),
                _ => System.realloc(ptr, layout, new_size),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for choice in Choice::ALL {
            assert_eq!(Choice::from_name(choice.name().as_bytes()), Some(choice));
        }
        assert_eq!(Choice::from_name(b"tcmalloc"), None);
    }

    #[test]
    fn each_allocator_allocates_and_frees() {
        let layout = Layout::from_size_align(4096, 64).unwrap_or_else(|e| panic!("{e}"));
        // SAFETY: a non-zero layout; every block is freed by the allocator that made it.
        unsafe {
            for (alloc, free) in [
                (MiMalloc.alloc_zeroed(layout), MIMALLOC),
                (Jemalloc.alloc_zeroed(layout), JEMALLOC),
                (System.alloc_zeroed(layout), GLIBC),
            ] {
                assert!(!alloc.is_null());
                assert_eq!(*alloc.add(4095), 0);
                match free {
                    MIMALLOC => MiMalloc.dealloc(alloc, layout),
                    JEMALLOC => Jemalloc.dealloc(alloc, layout),
                    _ => System.dealloc(alloc, layout),
                }
            }
        }
    }
}
