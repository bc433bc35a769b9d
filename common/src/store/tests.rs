use super::*;

fn temp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("store-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn urls_are_checked() {
    assert!(check_url("s3://bucket/some/prefix").is_ok());
    assert!(check_url("s3://bucket").is_ok());
    assert!(check_url("file:///tmp/x").is_ok());
    for bad in [
        "s3://",
        "s3://key:secret@bucket/x",
        "file://rel/path",
        "gs://b/x",
        "/tmp/x",
    ] {
        let e = check_url(bad).unwrap_err().to_string();
        assert!(e.contains("s3://BUCKET/PREFIX"), "{bad}: {e}");
    }
}

#[test]
fn upload_is_recorded_read_back_and_never_overwritten() {
    let dir = temp("up");
    let run = dir.join("crawl/fetched/00001");
    std::fs::create_dir_all(&run).unwrap();
    let file = run.join("a-00000.warc.gz");
    std::fs::write(&file, b"WARC bytes").unwrap();
    let store = WarcStore::open(&format!("file://{}/store", dir.display())).unwrap();
    let key = store.key_of(Path::new("fetched/00001/a-00000.warc.gz"));
    let up = store.upload(&file, &key).unwrap();
    assert_eq!(up.size, 10);
    assert!(
        up.url.starts_with("file:///") && up.url.ends_with("/store/fetched/00001/a-00000.warc.gz")
    );
    assert_eq!(
        std::fs::read(dir.join("store/fetched/00001/a-00000.warc.gz")).unwrap(),
        b"WARC bytes"
    );
    // The same bytes again: a redone upload, fine.
    assert_eq!(store.upload(&file, &key).unwrap(), up);
    let mut m = Manifest::read(&run).unwrap();
    m.append(up.clone()).unwrap();
    std::fs::remove_file(&file).unwrap();
    // Other bytes under the same name: refused, the object kept.
    std::fs::write(&file, b"other").unwrap();
    let e = store.upload(&file, &key).unwrap_err();
    assert!(matches!(e, StoreError::Collision { .. }), "{e}");
    std::fs::remove_file(&file).unwrap();
    assert_eq!(
        run_warcs(&run, vec![]).unwrap(),
        std::slice::from_ref(&file)
    );
    let copy = readable(&file).unwrap();
    assert!(copy.fetched());
    assert_eq!(std::fs::read(copy.path()).unwrap(), b"WARC bytes");
    let tmp = copy.path().to_path_buf();
    drop(copy);
    assert!(!tmp.exists());
    assert_eq!(verify_run(&run).unwrap(), (1, vec![]));
    std::fs::write(
        dir.join("store/fetched/00001/a-00000.warc.gz"),
        b"WARC bytez",
    )
    .unwrap();
    let (n, problems) = verify_run(&run).unwrap();
    assert_eq!(n, 1);
    assert!(problems[0].contains("sha256"), "{problems:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_torn_manifest_line_is_not_read_and_is_cut_before_the_next() {
    let dir = temp("torn");
    let mut m = Manifest::read(&dir).unwrap();
    let up = |n: &str| Upload {
        name: n.into(),
        size: 1,
        sha256: "ab".into(),
        url: format!("file:///x/{n}"),
    };
    m.append(up("a.warc.gz")).unwrap();
    let path = dir.join(MANIFEST_FILE);
    let mut text = std::fs::read(&path).unwrap();
    text.extend_from_slice(b"b.warc.gz\t1\ta");
    std::fs::write(&path, &text).unwrap();
    let mut m = Manifest::read(&dir).unwrap();
    assert_eq!(m.uploads(), [up("a.warc.gz")]);
    m.append(up("c.warc.gz")).unwrap();
    assert_eq!(
        Manifest::read(&dir).unwrap().uploads(),
        [up("a.warc.gz"), up("c.warc.gz")]
    );
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.starts_with("# uploads v1"));
    std::fs::write(&path, "# uploads v1\nbad line\n").unwrap();
    let e = Manifest::read(&dir).unwrap_err().to_string();
    assert!(e.contains("line 2"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn stale_copies_of_dead_readers_are_removed_live_ones_kept() {
    let tmp = temp("stale");
    // A process that has ended: its pid names no process now.
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    let dead_dir = tmp.join(format!(".store-{dead}-0"));
    std::fs::create_dir_all(&dead_dir).unwrap();
    std::fs::write(dead_dir.join("a.warc.gz"), b"copy").unwrap();
    // A dead pid whose lock is held: a reader of another pid namespace.
    let held_dir = tmp.join(format!(".store-{dead}-1"));
    std::fs::create_dir_all(&held_dir).unwrap();
    let held = crate::lock::try_lock(&held_dir.join(".lock"))
        .unwrap()
        .unwrap();
    let live_dir = tmp.join(format!(".store-{}-3", std::process::id()));
    std::fs::create_dir_all(&live_dir).unwrap();
    std::fs::write(live_dir.join("b.warc.gz"), b"copy").unwrap();
    // Not copies: left alone whatever their names hold.
    let others = [
        tmp.join(".store-notapid-1"),
        tmp.join(format!(".store-{dead}")),
        tmp.join("store-1-1"),
    ];
    for o in &others {
        std::fs::create_dir_all(o).unwrap();
    }
    let file = tmp.join(format!(".store-{dead}-9"));
    std::fs::write(&file, b"a file").unwrap();

    let removed = remove_stale_copies(&tmp);
    if cfg!(target_os = "linux") {
        assert_eq!(removed, 1);
        assert!(!dead_dir.exists());
    } else {
        assert_eq!(removed, 0);
        assert!(dead_dir.exists());
    }
    assert!(live_dir.join("b.warc.gz").is_file());
    assert!(held_dir.is_dir());
    drop(held);
    for o in &others {
        assert!(o.is_dir(), "{}", o.display());
    }
    assert!(file.is_file());
    std::fs::remove_dir_all(&tmp).unwrap();
}

#[test]
fn a_copy_holds_the_lock_of_its_directory_and_removes_it_when_dropped() {
    let (dir, _lock) = copy_dir().unwrap();
    assert!(
        crate::lock::try_lock(&dir.join(COPY_LOCK))
            .unwrap()
            .is_none()
    );
    let copy = Readable {
        path: dir.join("x.warc.gz"),
        copy_lock: Some(_lock),
    };
    std::fs::write(copy.path(), b"copy").unwrap();
    assert_eq!(remove_stale_copies(dir.parent().unwrap()), 0);
    assert!(copy.path().is_file());
    drop(copy);
    assert!(!dir.exists());
}

#[test]
fn a_crawls_prefix_is_found_in_its_run_files_keys() {
    assert_eq!(crawl_prefix("p/q/fetched/00003/x.warc.gz"), Some("p/q/"));
    assert_eq!(crawl_prefix("fetched/00003/x.warc.gz"), Some(""));
    assert_eq!(crawl_prefix("p/shards/002/fetched/00003/x"), Some("p/"));
    assert_eq!(crawl_prefix("shards/002/fetched/00003/x"), Some(""));
    assert_eq!(crawl_prefix("myfetched/00003/x"), None);
}
