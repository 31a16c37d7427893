//! The opaque ids a storage backend hands out for what a node-revision points at
//! (docs/formats/store.md, "Above the store"). Their whole contract:
//! - `NONE` means absent (empty contents, no properties, an empty directory, no
//!   predecessor); every id a backend hands out is not `NONE`.
//! - Equal ids name the same stored record, hence equal contents. Unequal ids say nothing
//!   (compare checksums).
//! - Ids are totally ordered: everything a record names has a smaller id than the record,
//!   and ids made by a later revision are greater than those of earlier ones.
//! - A published id names the same record for the repository's whole life.
//!
//! Nothing else may be assumed above the store: no arithmetic, no comparison with a
//! length, no tag bits. [`from_raw`](NodeRevId::from_raw) and [`raw`](NodeRevId::raw) are
//! for backends (and their caches' keys) alone.

use std::fmt;

macro_rules! id {
    ($(#[$doc:meta])* $name:ident, $what:literal) => {
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
        pub struct $name(u64);

        impl $name {
            /// Absent.
            pub const NONE: $name = $name(0);

            /// The id a backend encodes as `raw` (0 is [`Self::NONE`]). For backends.
            pub const fn from_raw(raw: u64) -> $name {
                $name(raw)
            }

            /// The number a backend encodes this id as. For backends and cache keys.
            pub const fn raw(self) -> u64 {
                self.0
            }

            pub const fn is_none(self) -> bool {
                self.0 == 0
            }

            pub const fn is_some(self) -> bool {
                self.0 != 0
            }

            /// `Some(self)` unless this is [`Self::NONE`].
            pub const fn get(self) -> Option<$name> {
                if self.0 == 0 {
                    None
                } else {
                    Some(self)
                }
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, concat!($what, "#{}"), self.0)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, concat!($what, " {}"), self.0)
            }
        }
    };
}

id!(
    /// A node-revision: one version of a file or directory.
    NodeRevId,
    "node-revision"
);
id!(
    /// A file's stored contents (a representation); `NONE` is empty contents.
    TextId,
    "text"
);
id!(
    /// A property list; `NONE` is no properties.
    PropsId,
    "property list"
);
id!(
    /// A directory listing; `NONE` is an empty directory.
    ListingId,
    "listing"
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn none_is_the_default_and_absent() {
        assert_eq!(NodeRevId::default(), NodeRevId::NONE);
        assert!(TextId::NONE.is_none());
        assert_eq!(PropsId::from_raw(7).get(), Some(PropsId::from_raw(7)));
        assert_eq!(ListingId::NONE.get(), None);
        assert!(NodeRevId::from_raw(1) > NodeRevId::NONE);
        assert_eq!(format!("{:?}", TextId::from_raw(42)), "text#42");
    }
}
