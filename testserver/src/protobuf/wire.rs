//! The protobuf wire format: varints, keys and length-delimited fields
//! (<https://protobuf.dev/programming-guides/encoding/>).

use super::ProtoError;

/// Wire type 0: varint.
pub const VARINT: u8 = 0;
/// Wire type 1: 64-bit.
pub const FIXED64: u8 = 1;
/// Wire type 2: length-delimited.
pub const LEN: u8 = 2;
/// Wire type 5: 32-bit.
pub const FIXED32: u8 = 5;

/// Reads fields off a byte slice.
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

/// One field's payload as read off the wire.
pub enum Payload<'a> {
    /// A varint.
    Varint(u64),
    /// A 64-bit value.
    Fixed64(u64),
    /// A length-delimited payload.
    Bytes(&'a [u8]),
    /// A 32-bit value (Kubernetes' messages have none; skipped).
    Fixed32,
}

impl<'a> Reader<'a> {
    /// A reader over `buf`.
    pub fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }

    /// Bytes not read yet.
    pub fn remaining(&self) -> usize {
        self.buf.len().saturating_sub(self.pos)
    }

    /// Reads a varint.
    pub fn varint(&mut self) -> Result<u64, ProtoError> {
        let mut out = 0u64;
        for shift in (0..64).step_by(7) {
            let b = *self.buf.get(self.pos).ok_or(ProtoError::Truncated)?;
            self.pos += 1;
            out |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(out);
            }
        }
        Err(ProtoError::BadVarint)
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], ProtoError> {
        let end = self.pos.checked_add(n).ok_or(ProtoError::Truncated)?;
        let out = self.buf.get(self.pos..end).ok_or(ProtoError::Truncated)?;
        self.pos = end;
        Ok(out)
    }

    /// The next field (tag and payload), or `None` at the end.
    pub fn field(&mut self) -> Result<Option<(u32, Payload<'a>)>, ProtoError> {
        if self.pos >= self.buf.len() {
            return Ok(None);
        }
        let key = self.varint()?;
        let tag = u32::try_from(key >> 3).map_err(|_| ProtoError::BadTag)?;
        let payload = match (key & 7) as u8 {
            VARINT => Payload::Varint(self.varint()?),
            FIXED64 => {
                let b = self.take(8)?;
                let mut a = [0u8; 8];
                a.copy_from_slice(b);
                Payload::Fixed64(u64::from_le_bytes(a))
            }
            LEN => {
                let n = usize::try_from(self.varint()?).map_err(|_| ProtoError::Truncated)?;
                Payload::Bytes(self.take(n)?)
            }
            FIXED32 => {
                self.take(4)?;
                Payload::Fixed32
            }
            other => return Err(ProtoError::WireType(other)),
        };
        Ok(Some((tag, payload)))
    }
}

/// Appends a varint.
pub fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Appends a field key.
pub fn put_key(out: &mut Vec<u8>, tag: u32, wire: u8) {
    put_varint(out, (u64::from(tag) << 3) | u64::from(wire));
}

/// Appends a length-delimited field.
pub fn put_bytes(out: &mut Vec<u8>, tag: u32, bytes: &[u8]) {
    put_key(out, tag, LEN);
    put_varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip_including_negative_int64() {
        for v in [0u64, 1, 127, 128, 300, u64::MAX, (-5i64) as u64] {
            let mut out = Vec::new();
            put_varint(&mut out, v);
            assert_eq!(Reader::new(&out).varint().expect("varint"), v);
        }
    }

    #[test]
    fn truncated_input_is_an_error_not_a_panic() {
        assert!(Reader::new(&[0x80]).varint().is_err());
        let mut r = Reader::new(&[0x0a, 0x05, b'a']);
        assert!(r.field().is_err());
    }
}
