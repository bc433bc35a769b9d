//! Inflating one whole gzip member in a single call (libdeflate), for the
//! common case where the member is already in the reader's input buffer
//! and its contents fit the output buffer. libdeflate inflates faster than
//! a streaming inflater because it needs no state between calls, but it
//! needs the whole member at once; the `_ex` entry point says how many
//! input bytes the member took, so its end need not be known beforehand.
//! Whatever it cannot do (a member cut by the buffer's end, contents larger
//! than the room given, damaged data) it refuses, and the reader inflates
//! that member the streaming way, which tells what is wrong and where.

use std::ptr::NonNull;

use libdeflate_sys::{
    libdeflate_alloc_decompressor, libdeflate_decompressor, libdeflate_free_decompressor,
    libdeflate_gzip_decompress_ex, libdeflate_result_LIBDEFLATE_SUCCESS,
};

/// A libdeflate decompressor, owned by one reader.
pub(super) struct WholeMember {
    d: NonNull<libdeflate_decompressor>,
}

// SAFETY: a libdeflate decompressor is plain memory with no tie to the
// thread that made it; `&mut self` keeps its use to one thread at a time.
unsafe impl Send for WholeMember {}

impl WholeMember {
    pub(super) fn new() -> WholeMember {
        // SAFETY: no preconditions; a null result is checked.
        let d = unsafe { libdeflate_alloc_decompressor() };
        WholeMember {
            d: NonNull::new(d)
                .expect("libdeflate could not allocate a decompressor (out of memory)"),
        }
    }

    /// Inflates the gzip member at the start of `input` (which may go on
    /// past it) into `out`, checking its CRC-32 and length; returns the
    /// input bytes the member took and the bytes written, or `None` when
    /// the member does not end within `input`, is damaged, or holds more
    /// than `out.len()` bytes.
    pub(super) fn inflate(&mut self, input: &[u8], out: &mut [u8]) -> Option<(usize, usize)> {
        let (mut used, mut made) = (0usize, 0usize);
        // SAFETY: the pointers and lengths come from live slices, the
        // decompressor is ours alone (`&mut self`), and libdeflate writes
        // only within `out` and the two result counts.
        let result = unsafe {
            libdeflate_gzip_decompress_ex(
                self.d.as_ptr(),
                input.as_ptr().cast(),
                input.len(),
                out.as_mut_ptr().cast(),
                out.len(),
                &mut used,
                &mut made,
            )
        };
        (result == libdeflate_result_LIBDEFLATE_SUCCESS).then_some((used, made))
    }
}

impl Drop for WholeMember {
    fn drop(&mut self) {
        // SAFETY: allocated by `libdeflate_alloc_decompressor`, freed once.
        unsafe { libdeflate_free_decompressor(self.d.as_ptr()) }
    }
}
