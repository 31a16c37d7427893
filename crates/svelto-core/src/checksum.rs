use std::fmt;

/// An MD5 digest, the checksum Subversion has always carried for file contents.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Md5(pub [u8; 16]);

/// A SHA-1 digest, the second checksum of file contents (and the key Svelto dedupes by).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Sha1(pub [u8; 20]);

macro_rules! digest_impl {
    ($t:ident, $n:expr) => {
        impl $t {
            /// Parses lowercase or uppercase hex of exactly the right length.
            pub fn from_hex(s: &str) -> Option<Self> {
                let mut out = [0u8; $n];
                hex::decode_to_slice(s.trim(), &mut out).ok()?;
                Some($t(out))
            }
            pub fn to_hex(&self) -> String {
                hex::encode(self.0)
            }
        }
        impl fmt::Display for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.to_hex())
            }
        }
        impl fmt::Debug for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}({})", stringify!($t), self.to_hex())
            }
        }
    };
}
digest_impl!(Md5, 16);
digest_impl!(Sha1, 20);

/// MD5 of the empty string, which Subversion reports for empty files.
pub const EMPTY_MD5: Md5 = Md5([
    0xd4, 0x1d, 0x8c, 0xd9, 0x8f, 0x00, 0xb2, 0x04, 0xe9, 0x80, 0x09, 0x98, 0xec, 0xf8, 0x42, 0x7e,
]);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trip() {
        let m = Md5::from_hex("d41d8cd98f00b204e9800998ecf8427e").expect("valid hex");
        assert_eq!(m, EMPTY_MD5);
        assert_eq!(m.to_hex(), "d41d8cd98f00b204e9800998ecf8427e");
        assert!(Md5::from_hex("d41d").is_none());
        assert!(Sha1::from_hex("zz").is_none());
    }
}
