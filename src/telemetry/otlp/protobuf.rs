//! Protobuf's wire format, as much of it as OTLP's messages need: fields written forward
//! into one buffer, a nested message's length put in front of it once its body is written.

/// Protobuf wire types.
const VARINT: u32 = 0;
pub(super) const FIXED64: u32 = 1;
const LEN: u32 = 2;
const FIXED32: u32 = 5;

/// `value` as a protobuf varint: its bytes, and how many of them it takes.
fn varint(mut value: u64) -> ([u8; 10], usize) {
    let (mut bytes, mut size) = ([0_u8; 10], 0);
    while value >= 0x80 {
        bytes[size] = (value as u8) | 0x80;
        value >>= 7;
        size += 1;
    }
    bytes[size] = value as u8;
    (bytes, size + 1)
}

/// Protobuf, written forward into one buffer. Fields at their default value are left out, as
/// proto3 does.
#[derive(Default)]
pub(super) struct Writer(Vec<u8>);

impl Writer {
    pub(super) fn with_capacity(bytes: usize) -> Self {
        Self(Vec::with_capacity(bytes))
    }

    pub(super) fn into_bytes(self) -> Vec<u8> {
        self.0
    }

    pub(super) fn raw(&mut self, bytes: &[u8]) {
        self.0.extend_from_slice(bytes);
    }

    fn varint(&mut self, value: u64) {
        let (bytes, size) = varint(value);
        self.raw(&bytes[..size]);
    }

    pub(super) fn key(&mut self, field: u32, wire_type: u32) {
        self.varint(u64::from((field << 3) | wire_type));
    }

    pub(super) fn varint_field(&mut self, field: u32, value: u64) {
        self.key(field, VARINT);
        self.varint(value);
    }

    pub(super) fn uint(&mut self, field: u32, value: u64) {
        if value != 0 {
            self.varint_field(field, value);
        }
    }

    pub(super) fn fixed64(&mut self, field: u32, value: u64) {
        if value != 0 {
            self.key(field, FIXED64);
            self.raw(&value.to_le_bytes());
        }
    }

    pub(super) fn fixed32(&mut self, field: u32, value: u32) {
        if value != 0 {
            self.key(field, FIXED32);
            self.raw(&value.to_le_bytes());
        }
    }

    pub(super) fn bytes(&mut self, field: u32, bytes: &[u8]) {
        if !bytes.is_empty() {
            self.len_delimited(field, bytes);
        }
    }

    pub(super) fn string(&mut self, field: u32, text: &str) {
        self.bytes(field, text.as_bytes());
    }

    pub(super) fn oneof_string(&mut self, field: u32, text: &str) {
        self.len_delimited(field, text.as_bytes());
    }

    fn len_delimited(&mut self, field: u32, bytes: &[u8]) {
        self.key(field, LEN);
        self.varint(bytes.len() as u64);
        self.raw(bytes);
    }

    /// A nested message (always written, even empty, as a set message field is): a byte is
    /// kept for its length and the body written after it; a body of 128 bytes or more, whose
    /// length takes more bytes, is moved along to make room.
    pub(super) fn message(&mut self, field: u32, body: impl FnOnce(&mut Self)) {
        self.key(field, LEN);
        self.0.push(0);
        let start = self.0.len();
        body(self);
        let length = self.0.len() - start;
        if length < 0x80 {
            self.0[start - 1] = length as u8;
            return;
        }
        let (prefix, size) = varint(length as u64);
        self.0.resize(self.0.len() + size - 1, 0);
        self.0.copy_within(start..start + length, start + size - 1);
        self.0[start - 1..start - 1 + size].copy_from_slice(&prefix[..size]);
    }
}
