//! Subversion's error codes (`svn_error_codes.h`), the one place Svelto spells them: each
//! constant is Subversion's `SVN_ERR_` name without the prefix. Clients and scripts
//! recognise a failure by its code (`svn: E160013: ...`), so every front end and tool
//! sends or prints these numbers.

// Bad input (SVN_ERR_BAD_CATEGORY_START, 125000).
pub const BAD_FILENAME: u32 = 125001;
pub const BAD_URL: u32 = 125002;
pub const BAD_DATE: u32 = 125003;
pub const BAD_PROPERTY_VALUE: u32 = 125005;
pub const BAD_UUID: u32 = 125008;
pub const BAD_CONFIG_VALUE: u32 = 125009;
pub const BAD_PROPERTY_VALUE_EOL: u32 = 125017;

// XML, I/O, streams, nodes, entries.
pub const XML_MALFORMED: u32 = 130003;
pub const XML_UNESCAPABLE_DATA: u32 = 130004;
pub const IO_INCONSISTENT_EOL: u32 = 135000;
pub const STREAM_MALFORMED_DATA: u32 = 140001;
pub const NODE_UNEXPECTED_KIND: u32 = 145001;
pub const ENTRY_MISSING_REVISION: u32 = 150003;

// The filesystem (160000).
pub const FS_GENERAL: u32 = 160000;
pub const FS_CORRUPT: u32 = 160004;
pub const FS_PATH_SYNTAX: u32 = 160005;
pub const FS_NO_SUCH_REVISION: u32 = 160006;
pub const FS_NO_SUCH_TRANSACTION: u32 = 160007;
pub const FS_NOT_FOUND: u32 = 160013;
pub const FS_NOT_DIRECTORY: u32 = 160016;
pub const FS_NOT_FILE: u32 = 160017;
pub const FS_ALREADY_EXISTS: u32 = 160020;
pub const FS_CONFLICT: u32 = 160024;
pub const FS_TXN_OUT_OF_DATE: u32 = 160028;
pub const FS_NO_USER: u32 = 160034;
pub const FS_PATH_ALREADY_LOCKED: u32 = 160035;
pub const FS_BAD_LOCK_TOKEN: u32 = 160037;
pub const FS_LOCK_OWNER_MISMATCH: u32 = 160039;
pub const FS_NO_SUCH_LOCK: u32 = 160040;
pub const FS_OUT_OF_DATE: u32 = 160042;
pub const FS_PROP_BASEVALUE_MISMATCH: u32 = 160049;
pub const FS_MALFORMED_TXN_ID: u32 = 160053;

// The repository layer (165000).
pub const REPOS_LOCKED: u32 = 165000;
pub const REPOS_HOOK_FAILURE: u32 = 165001;
pub const REPOS_BAD_ARGS: u32 = 165002;
pub const REPOS_BAD_REVISION_REPORT: u32 = 165004;
pub const REPOS_UNSUPPORTED_VERSION: u32 = 165005;
pub const REPOS_DISABLED_FEATURE: u32 = 165006;
pub const REPOS_POST_COMMIT_HOOK_FAILED: u32 = 165007;
pub const REPOS_POST_LOCK_HOOK_FAILED: u32 = 165008;
pub const REPOS_POST_UNLOCK_HOOK_FAILED: u32 = 165009;

// Repository access (170000).
pub const RA_ILLEGAL_URL: u32 = 170000;
pub const RA_NOT_AUTHORIZED: u32 = 170001;
pub const RA_UUID_MISMATCH: u32 = 170009;

// Local repository access (180000).
pub const RA_LOCAL_REPOS_OPEN_FAILED: u32 = 180001;

// svndiff (185000).
pub const SVNDIFF_INVALID_HEADER: u32 = 185000;
pub const SVNDIFF_CORRUPT_WINDOW: u32 = 185001;
pub const SVNDIFF_BACKWARD_VIEW: u32 = 185002;
pub const SVNDIFF_INVALID_OPS: u32 = 185003;
pub const SVNDIFF_UNEXPECTED_END: u32 = 185004;
pub const SVNDIFF_INVALID_COMPRESSED_DATA: u32 = 185005;

// Miscellaneous (200000).
/// "A problem occurred; see other errors for details".
pub const BASE: u32 = 200000;
pub const MALFORMED_FILE: u32 = 200002;
pub const INCORRECT_PARAMS: u32 = 200004;
pub const UNSUPPORTED_FEATURE: u32 = 200007;
pub const ILLEGAL_TARGET: u32 = 200009;
pub const DIR_NOT_EMPTY: u32 = 200011;
pub const EXTERNAL_PROGRAM: u32 = 200012;
pub const CHECKSUM_MISMATCH: u32 = 200014;
pub const INVALID_DIFF_OPTION: u32 = 200016;
pub const PROPERTY_NOT_FOUND: u32 = 200017;

// The command line (205000).
pub const CL_ARG_PARSING_ERROR: u32 = 205000;
pub const CL_INSUFFICIENT_ARGS: u32 = 205001;
pub const CL_MUTUALLY_EXCLUSIVE_ARGS: u32 = 205002;
pub const CL_REPOS_VERIFY_FAILED: u32 = 205012;

// RA layers (170000), HTTP (175000).
pub const RA_OUT_OF_DATE: u32 = 170004;
pub const RA_DAV_MALFORMED_DATA: u32 = 175009;

// svn:// (210000).
pub const RA_SVN_UNKNOWN_CMD: u32 = 210001;
pub const RA_SVN_CONNECTION_CLOSED: u32 = 210002;
pub const RA_SVN_MALFORMED_DATA: u32 = 210004;
pub const RA_SVN_REPOS_NOT_FOUND: u32 = 210005;
pub const RA_SVN_BAD_VERSION: u32 = 210006;
pub const RA_SVN_REQUEST_SIZE: u32 = 210009;
pub const RA_SVN_RESPONSE_SIZE: u32 = 210010;

// Authentication and authorization (215000, 220000).
pub const AUTHN_CATEGORY_START: u32 = 215000;
pub const AUTHN_FAILED: u32 = 215004;
pub const AUTHZ_CATEGORY_START: u32 = 220000;
pub const AUTHZ_ROOT_UNREADABLE: u32 = 220000;
pub const AUTHZ_UNREADABLE: u32 = 220001;
pub const AUTHZ_INVALID_CONFIG: u32 = 220003;
pub const AUTHZ_UNWRITABLE: u32 = 220004;

/// Each category of codes spans this many (`SVN_ERR_CATEGORY_SIZE`).
pub const CATEGORY_SIZE: u32 = 5000;

/// Whether `code` is in the category that starts at `start` (a `*_CATEGORY_START`).
pub fn in_category(code: u32, start: u32) -> bool {
    (start..start + CATEGORY_SIZE).contains(&code)
}

/// Subversion's text for an error created without one (`svn_strerror`, what
/// `svn_err_best_message` falls back to), for the codes Svelto creates without a message;
/// empty for the others.
pub fn default_message(code: u32) -> &'static str {
    match code {
        BAD_DATE => "Bogus date",
        BAD_PROPERTY_VALUE => "Wrong or unexpected property value",
        BAD_PROPERTY_VALUE_EOL => "Invalid property value",
        _ => "",
    }
}
