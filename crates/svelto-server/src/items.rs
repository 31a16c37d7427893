//! How repository values travel in svn:// items (protocol doc 4): property lists, and the
//! placeholder date of a revision without one. Shared by the commands that send them.

use svelto_core::PropList;
use svelto_wire::Item;

/// The epoch, for dates a field needs but a revision lacks.
pub const EPOCH: &str = "1970-01-01T00:00:00.000000Z";

/// `( name:string value:string )` per property.
pub fn proplist_items(props: &PropList) -> Vec<Item> {
    props
        .iter()
        .map(|(k, v)| Item::list(vec![Item::string(k.clone()), Item::string(v.clone())]))
        .collect()
}

/// A property list as one list item.
pub fn proplist_item(props: &PropList) -> Item {
    Item::List(proplist_items(props))
}
