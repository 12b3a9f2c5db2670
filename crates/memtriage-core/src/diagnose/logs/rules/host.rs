//! Host memory as a job sees it without the kernel log: allocations that raise instead
//! of killing, memory figures the job printed that keep rising, and swap that is full
//! and busy.

use super::{rule, ClassInfo, FailureClass as C, Rule};
use crate::model::finding::CauseKind::{Capacity, Configuration, UserCode};
use crate::model::finding::Certainty::{Likely, Possible};
use crate::model::finding::Severity::{Error, Warn};
use crate::model::ids;
use crate::model::units::iec;

/// Swap this full (of its size) is a machine that thrashes when pages move.
pub const SWAP_FULL_SHARE: f64 = 0.8;
/// Pages moving in and out of swap at this rate (KiB/s, as vmstat prints si/so).
pub const SWAP_BUSY_KIB_S: u64 = 1024;
/// Swap holding this much while memory is exhausted is a machine paging its working
/// set, however large the swap device is.
pub const SWAP_CARRYING_BYTES: u64 = 1 << 30;
/// Memory this used (percent, as a job or a progress bar prints RAM use) is exhausted.
pub const RAM_EXHAUSTED_PCT: f64 = 90.0;

/// One memory figure as people print it: `12.5 GB`, `12,345 MiB`, `3.2G`, `1234M`.
pub fn size_in_bytes(number: &str, unit: &str) -> Option<u64> {
    crate::model::units::bytes_of(number.replace(',', "").parse().ok()?, unit)
}

fn capture<'a>(out: &'a [(String, String)], name: &str) -> Option<&'a str> {
    out.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
}

/// The exception names no device's memory (`CudaError`, `GPUException`, `XlaRuntimeError`).
// The rules' `Extractor` type takes the Vec this only reads.
#[allow(clippy::ptr_arg)]
fn extract_host_exception(_msg: &str, out: &mut Vec<(String, String)>) -> bool {
    capture(out, "exception").is_some_and(|name| {
        let name = name.to_lowercase();
        ![
            "cuda", "gpu", "hip", "opencl", "metal", "vulkan", "mps", "xla", "tpu", "device",
        ]
        .iter()
        .any(|device| name.contains(device))
    })
}

/// A figure of the job's memory: kept as bytes under `bytes`, its series under
/// `series`. The finding is decided over the whole series (report), not per line.
fn extract_memory_figure(_msg: &str, out: &mut Vec<(String, String)>) -> bool {
    // `12776 (kb)`: the unit in parentheses, as some jobs print it.
    let unit = capture(out, "unit")
        .or_else(|| capture(out, "unit2"))
        .unwrap_or("");
    let label = capture(out, "label").unwrap_or("").to_ascii_lowercase();
    let spaced = capture(out, "sep").is_some_and(|s| !s.contains([':', '=']));
    let generic = label.ends_with("memory") || label.ends_with("mem");
    if unit.is_empty() && (spaced || generic) {
        return false;
    }
    let Some(bytes) = capture(out, "value").and_then(|v| size_in_bytes(v, unit)) else {
        return false;
    };
    let mut series = capture(out, "label")
        .unwrap_or("used memory (free)")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_ascii_lowercase();
    // `Memory allocated after run 3`: the runs are the readings, not series of their own.
    if let Some(at) = series.find(" after ") {
        if series.ends_with(|c: char| c.is_ascii_digit()) {
            series.truncate(at);
        }
    }
    if unit.is_empty() {
        // free -g, --giga: the scale is the command line's, not the output's.
        out.push(("as_printed".into(), "yes".into()));
    }
    out.push(("bytes".into(), bytes.to_string()));
    out.push(("series".into(), series));
    true
}

/// `Swap: total used free` from free, top or a job: evidence only when nearly full.
fn extract_swap_full(_msg: &str, out: &mut Vec<(String, String)>) -> bool {
    let figure = |name: &str, unit: &str| {
        let v = capture(out, name).or_else(|| capture(out, &format!("{name}2")))?;
        let (num, suffix): (String, String) = (
            v.chars()
                .filter(|c| c.is_ascii_digit() || *c == '.' || *c == ',')
                .collect(),
            v.chars().filter(|c| c.is_ascii_alphabetic()).collect(),
        );
        let suffix = if suffix.is_empty() { unit } else { &suffix };
        size_in_bytes(&num, suffix)
    };
    let unit = capture(out, "scale").unwrap_or("k").to_string();
    let unit = match unit.as_str() {
        "KiB" | "k" | "" => "k",
        "MiB" => "m",
        "GiB" => "g",
        other => other,
    }
    .to_string();
    let total = figure("total", &unit);
    let share_used = || {
        let pct: f64 = capture(out, "pct")?.parse().ok()?;
        Some((total? as f64 * pct.min(100.0) / 100.0) as u64)
    };
    let used = figure("used", &unit)
        .or_else(|| Some(total?.saturating_sub(figure("free", &unit)?)))
        .or_else(share_used);
    let (Some(total), Some(used)) = (total, used) else {
        return false;
    };
    if total == 0 {
        return false;
    }
    // top's `avail Mem` beside it: gigabytes in swap with next to nothing available
    // is thrashing even on a swap device too large to fill.
    let avail = figure("avail", &unit);
    let full = used as f64 >= SWAP_FULL_SHARE * total as f64;
    let carrying = used >= SWAP_CARRYING_BYTES && avail.is_some_and(|a| a.saturating_mul(8) < used);
    if !full && !carrying {
        return false;
    }
    let share = format!("{:.0}%", used as f64 * 100.0 / total as f64);
    let state = match avail {
        Some(a) if carrying && !full => format!(
            "holds {} ({share} of {}) with {} of memory available",
            iec(used),
            iec(total),
            iec(a)
        ),
        _ => format!("is {share} full ({} of {})", iec(used), iec(total)),
    };
    out.push(("swap_state".into(), state));
    out.push(("swap_used".into(), iec(used)));
    out.push(("swap_total".into(), iec(total)));
    out.push(("swap_share".into(), share));
    true
}

/// A job's own `RAM= 16.3/17.2 GB (95.2%) | swap= 23.78 GB` (progress bars print
/// it each step): evidence when memory is exhausted and swap carries gigabytes.
fn extract_ram_and_swap(_msg: &str, out: &mut Vec<(String, String)>) -> bool {
    let pct = capture(out, "ram_pct").and_then(|p| p.parse::<f64>().ok());
    let swap = capture(out, "swap")
        .zip(capture(out, "swap_unit"))
        .and_then(|(n, u)| size_in_bytes(n, u));
    let (Some(pct), Some(swap)) = (pct, swap) else {
        return false;
    };
    if pct < RAM_EXHAUSTED_PCT || swap < SWAP_CARRYING_BYTES {
        return false;
    }
    out.push(("swap_used".into(), iec(swap)));
    true
}

/// A `sar -S` row: evidence when swap is nearly full.
#[allow(clippy::ptr_arg)] // the Extractor signature: other extractors push
fn extract_sar_swap_row(_msg: &str, out: &mut Vec<(String, String)>) -> bool {
    capture(out, "pct")
        .and_then(|p| p.parse::<f64>().ok())
        .is_some_and(|p| p >= SWAP_FULL_SHARE * 100.0)
}

/// A `vmstat` row: swap in use and pages swapped in and out per second.
#[allow(clippy::ptr_arg)] // the Extractor signature: other extractors push
fn extract_vmstat_row(_msg: &str, out: &mut Vec<(String, String)>) -> bool {
    let n = |name: &str| capture(out, name).and_then(|v| v.parse::<u64>().ok());
    let (Some(si), Some(so)) = (n("si"), n("so")) else {
        return false;
    };
    si + so >= SWAP_BUSY_KIB_S
}

pub(super) static RULES: &[Rule] = &[
    // ---- host allocations that raise ---------------------------------------------
    rule(
        "torch.cpu-allocator",
        C::HostAllocFailure,
        Error,
        &["DefaultCPUAllocator", "alloc_cpu.cpp", "CPUAllocator.cpp"],
        r"DefaultCPUAllocator: (?:can't allocate memory|not enough memory): you tried to allocate (?P<bytes>\d+) bytes|\[enforce fail at (?:[^\]\s]*[\\/])?(?:alloc_cpu|CPUAllocator)\.cpp:\d+\]",
        "PyTorch could not allocate {bytes} bytes of host memory (DefaultCPUAllocator)",
    ),
    rule(
        // numpy before 1.17 said neither the size nor `for an array`.
        "numpy.unable-to-allocate-array",
        C::HostAllocFailure,
        Error,
        &["Unable to allocate"],
        r"Unable to allocate array with shape (?P<shape>\(.*?\))(?: and data type (?P<dtype>\w+))?",
        "numpy could not allocate an array of shape {shape}",
    ),
    rule(
        "numpy.unable-to-allocate",
        C::HostAllocFailure,
        Error,
        &["Unable to allocate", "_ArrayMemoryError"],
        r"(?:_ArrayMemoryError: )?Unable to allocate (?P<size>[\d.]+ [KMGTPE]?i?B) for an array with shape (?P<shape>\(.*?\))(?: and data type (?P<dtype>\w+))?|_ArrayMemoryError",
        "numpy could not allocate {size} for an array of shape {shape}",
    ),
    rule(
        "python.memory-error",
        C::HostAllocFailure,
        Error,
        &["MemoryError"],
        // IPython heads its traceback with the exception's name, padded to the right;
        // pyarrow names its allocator's failure ArrowMemoryError, conda its own
        // CondaMemoryError; a report names it
        // after a colon, the line's last word (`最后位置是：MemoryError`).
        r"^(?:[\w.]+\.)?(?:Arrow|Conda)?MemoryError(?::.*|\(\)|\s*)$|\bCondaMemoryError: |^(?:E\s+|Traceback.*?)?MemoryError\b(?::|\s*$)|\braise MemoryError\b|\bMemoryError: (?:std::bad_alloc|Unable to allocate|Out of memory|out of memory)|^MemoryError\s{2,}Traceback \(most recent call last\)|[:：]\s*MemoryError\s*$",
        "Python raised MemoryError: the process could not get more host memory",
    ),
    Rule {
        extract: Some(extract_host_exception),
        ..rule(
            // A library's own exception whose whole message is that memory ran out:
            // `gurobipy.GurobiError: Out of memory`, `PLException: …: out of memory`
            // is a GPU's where its name says so (left to the GPU's rules).
            "exception.out-of-memory",
            C::HostAllocFailure,
            Error,
            // Literals whose first anchor is `mory`: ` of ` and `tion` are in most lines.
            &["of memory", "enough memory", "insufficient memory"],
            r"(?P<exception>(?-i:\b(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception))): (?:out of|not enough|insufficient) memory\s*(?:$|[.,;!(])",
            "{exception}: the program could not allocate host memory",
        )
    },
    rule(
        // Tools' own words for a failed allocation: kraken2's database load, InnoDB's
        // buffer pool, GDAL's (its error number 2 is CPLE_OutOfMemory: `ERROR 2:
        // overview.cpp, 4145: cannot allocate 29949646468 bytes`), osm2pgsql's node
        // cache; macOS's libmalloc when the VM refused a region (`malloc: can't
        // allocate region`, then `mach_vm_map(size=…) failed (error code=3)`), Armadillo's
        // `SpMat::init(): requested size is too large; suggest to enable ARMA_64BIT_WORD`.
        "tool.failed-allocation",
        C::HostAllocFailure,
        Error,
        &["Failed attempt to allocate", "allocate memory for the buffer pool", "InnoDB: mmap(", "ERROR 2: ", "Out of memory for dense node cache", "Out of memory for sparse node cache", "can't allocate region", "suggest to enable ARMA_64BIT_WORD"],
        r"\bFailed attempt to allocate \d+\s*bytes\b|\brequested size is too large; suggest to enable ARMA_64BIT_WORD\b|\bOut of memory for (?:dense|sparse) node cache\b|\bmalloc: can't allocate region\b|\bERROR 2: .{0,120}?\b(?:cannot allocate|failed to allocate|out of memory allocating) (?P<bytes>\d+) bytes\b|\bInnoDB: Cannot allocate memory for the buffer pool\b|\bInnoDB: mmap\(\d+ bytes\) failed; errno 12\b",
        "The program could not allocate the memory it asked for",
    ),
    rule(
        // Runtimes' and sanitizers' own words when their allocator was refused memory:
        // GHC's RTS (`Unable to commit N bytes of memory`, `out of memory (requested N
        // bytes)`, a heap past its `-M`), the sanitizers' allocators (which say it
        // alike), before the sanitizers' report of a bug; Go's thread creation, .NET's
        // E_OUTOFMEMORY, Node's ArrayBuffer, Ollama's refusal to load a model.
        "runtime.allocator-refused",
        C::HostAllocFailure,
        Error,
        &["Unable to commit", "out of memory (requested", "heap overflow", "Heap exhausted", "Sanitizer failed to allocate", "allocator is out of memory", "allocator is trying to allocate", "allocation-size-too-big", "requested allocation size", "failed to create new OS thread", "0x8007000E", "Array buffer allocation failed", "requires more system memory"],
        r"\bUnable to commit \d+ bytes of memory\b|\bout of memory \(requested \d+ bytes\)|(?:^|: )heap overflow\s*$|\bHeap exhausted;|\b(?:Address|Memory|Thread|Leak|HWAddress)Sanitizer failed to allocate 0x[0-9a-f]+|Sanitizer: (?:out of memory: )?allocator is (?:out of memory|trying to allocate)|Sanitizer: (?:requested allocation size|allocation-size-too-big)|requested allocation size 0x[0-9a-f]+ .{0,80}exceeds maximum supported size|\bfailed to create new OS thread \(have \d+ already; errno=12\)|\b(?:GC heap initialization failed with error|Failed to create CoreCLR, HRESULT:) 0x8007000E\b|\bRangeError: Array buffer allocation failed\b|\bmodel requires more system memory \([\d.]+ [KMGT]i?B\) than is available",
        "The program's allocator was refused the memory it asked for",
    ),
    rule(
        // Rust's io::Error for ENOMEM (`(os error 12)`, or its Debug form).
        "rust.enomem",
        C::HostAllocFailure,
        Error,
        &["(os error 12)", "kind: OutOfMemory"],
        r"\bCannot allocate memory \(os error 12\)|\bcode: 12, kind: OutOfMemory\b",
        "A Rust program could not allocate memory (ENOMEM, os error 12)",
    ),
    rule(
        // Jetson's NvMap (the GPU and the CPU share its memory) could not allocate:
        // error 12 is ENOMEM.
        "jetson.nvmap-alloc-failed",
        C::HostAllocFailure,
        Error,
        &["NvMapMem"],
        r"\bNvMapMem\w*Alloc\w*: (?:\d+ )?error 12\b",
        "Jetson's NvMap could not allocate memory (error 12, ENOMEM): RAM shared with the GPU ran out",
    ),
    rule(
        "windows.paging-file-too-small",
        C::HostAllocFailure,
        Error,
        &["WinError 1455", "paging file is too small", "页面文件太小", "errno=1455"],
        // Go's runtime names the call and the error's number.
        r"WinError 1455|paging file is too small for this operation|页面文件太小|\bVirtualAlloc of \d+ bytes failed with errno=1455\b",
        "Windows: the paging file is too small ([WinError 1455]): committed memory ran out",
    ),
    Rule {
        certainty: Likely,
        // Beside a failed mmap, ENOMEM is the mapping limit's.
        absorbed_by: Some(C::MaxMapCount),
        ..rule(
            "os.enomem",
            C::HostAllocFailure,
            Error,
            &["Errno 12", "Cannot allocate memory", "ENOMEM", "cannot allocate memory", "Kann nicht genügend Speicher zuweisen", "Impossible d'allouer de la mémoire", "No se puede asignar memoria", "Não foi possível alocar memória", "Невозможно выделить память", "无法分配内存", "メモリを確保できません", "enough memory"],
            // Tcl's exec (`couldn't fork child process: not enough memory`), a
            // strerror in parentheses (`malloc buckets failed(Cannot allocate memory)`)
            // and raised as an exception (Crystal's `Cannot allocate new fiber stack:
            // Cannot allocate memory (RuntimeError)`).
            r"\[Errno 12\]|\bfork: (?:retry: )?Cannot allocate memory|\bfailed[.:] Cannot allocate memory\b|\bcouldn't fork child process: not enough memory\b|(?:^|: |\()Cannot allocate memory\s*(?:$|[\x22'\x60)\]])|\bENOMEM\b|(?:spawn|exec|clone|fork|posix_spawn|vfork|subprocess|Popen|worker|thread)\S*.{0,60}[Cc]annot allocate memory|[Cc]annot allocate memory.{0,60}(?:fork|spawn|worker|subprocess)|OSError: \[Errno 12\]|(?:^|\s|: )Cannot allocate memory - \S|: Cannot allocate memory \(\w*(?:Error|Exception)\)|(?:^|: )(?:Kann nicht genügend Speicher zuweisen|Impossible d'allouer de la mémoire|No se puede asignar memoria|Não foi possível alocar memória|Невозможно выделить память|无法分配内存|メモリを確保できません)\s*$|\b(?:mmap|mmap64|malloc|calloc|realloc|memalign|posix_memalign|mremap)(?:\(\d?\))?(?: \w+)? failed\W{0,4}(?:Reason: |\[12\] )?[Cc]annot allocate memory",
            "The system refused a memory allocation (ENOMEM, Cannot allocate memory)",
        )
    },
    rule(
        // GLib's allocator (gmem.c) ends the process with g_error when malloc refuses
        // or a size overflows: `GLib-ERROR **: …: failed to allocate N bytes` (its
        // `**` read as markdown emphasis where the paste is rendered).
        "glib.allocation-failed",
        C::HostAllocFailure,
        Error,
        &["GLib-ERROR"],
        r"\bGLib-ERROR\s*(?:\*\*)?\s*: .*?(?:failed to allocate (?P<bytes>\d+) bytes|overflow allocating (?P<count>\d+)\*(?P<size>\d+) bytes)",
        "GLib could not allocate memory and ended the process",
    ),
    rule(
        // OpenCV's allocator: 2.x's `OpenCV Error: Insufficient memory (…)`, 3.x and
        // later's `error: (-4:Insufficient memory) Failed to allocate N bytes`.
        "opencv.insufficient-memory",
        C::HostAllocFailure,
        Error,
        &["Insufficient memory", "(-4) Failed to allocate"],
        r"OpenCV Error: Insufficient memory \(Failed to allocate (?P<bytes>\d+) bytes\)|\(-4:Insufficient memory\) Failed to allocate (?P<bytes2>\d+) bytes|error: \(-4\) Failed to allocate (?P<bytes3>\d+) bytes",
        "OpenCV could not allocate memory (Insufficient memory)",
    ),
    rule(
        // A hypervisor that cannot get a guest's RAM from the host: QEMU (hugepages
        // short, or RAM), VirtualBox's VERR_NO_*MEMORY, Hyper-V, VMware's vmx
        // (`[msg.memsched.preNotEnoughMem] Not enough physical memory is available to
        // power on this virtual machine`), Xen's and Qubes' (`Not enough memory to
        // start domain 'win'`, a populate-on-demand guest `out of PoD memory`);
        // Hyper-V's in any language (`无法初始化内存: 内存已用完 (0x8007000E)`, could not
        // initialize memory: out of memory).
        "vm.guest-memory",
        C::HostAllocFailure,
        Error,
        &["cannot set up guest memory", "backing store for guest RAM", "Insufficient free host memory pages", "VERR_NO_", "Not enough memory in the system to start", "Not enough physical memory is available to power on", "Not enough memory to start domain", "out of PoD memory", "0x8007000E"],
        r"cannot set up guest memory '[^']+': (?:Cannot allocate memory|Out of memory)|unable to map backing store for guest RAM|Insufficient free host memory pages available to allocate guest RAM|\bVERR_NO_(?:LOW_|PHYS_|)MEMORY\b|Not enough memory in the system to start the virtual machine|Not enough physical memory is available to power on this virtual machine|Not enough memory to start domain '[^']+'|\bout of PoD memory\b|\b(?:could not|failed to|unable to) initialize memory\b[^\n]{0,120}\(0x8007000E\)|无法初始化内存\s*[:：][^\n]{0,40}\(0x8007000E\)",
        "The hypervisor could not get the guest's memory from the host",
    ),
    rule(
        // A JVM's heap, metaspace, direct buffers or threads ran out (a JVM's mapped
        // files are max_map_count's, Ray's error its memory monitor's).
        "jvm.out-of-memory-error",
        C::HostAllocFailure,
        Error,
        &["OutOfMemoryError", "memory error: ", "until OOM"],
        // Without a message it is the class's name alone (`(no error message)` is
        // Gradle's word for that); JDK 17 says `Cannot reserve … of direct buffer memory`;
        // ImageJ's dialog words it `Out of memory error: Java heap space`; Solr names
        // the class in its error's metadata (`"root-error-class","java.lang.OutOfMemoryError"`);
        // with no heap left to print the first, the JVM says only where the second was
        // thrown (`Exception: java.lang.OutOfMemoryError thrown from the
        // UncaughtExceptionHandler in thread "…"`).
        r"(?:java\.lang\.)?(?:OutOfMemoryError|Out of memory error): (?P<what>Java heap space|PermGen space|GC overhead limit exceeded|unable to create (?:new )?native thread|Direct buffer memory|Metaspace|Compressed class space|Requested array size exceeds VM limit|Failed to create a thread|Cannot reserve \d+ bytes of direct buffer memory|Failed to allocate a \d+ byte allocation with \d+ free bytes)|\bjava\.lang\.OutOfMemoryError(?: \(no error message\))?\s*$|\bException: java\.lang\.OutOfMemoryError thrown from the UncaughtExceptionHandler\b|^\s*Failed to allocate a \d+ byte allocation with \d+ free bytes and \S+ until OOM\b|\x22root-error-class\x22,\s*\x22java\.lang\.OutOfMemoryError\x22",
        "The JVM ran out of memory: OutOfMemoryError: {what}",
    ),
    rule(
        // Programs that name their own allocation that failed: Dovecot
        // (`Fatal: block_alloc(268435456): Out of memory`), ImageMagick (`cache
        // resources exhausted \`x.jpg' @ error/cache.c/OpenPixelCache/3945`), .NET
        // (`Insufficient memory to continue the execution of the program.`), TeX at its
        // own memory's size (`! TeX capacity exceeded, sorry [main memory size=3000000]`),
        // CalculiX (`*ERROR in u_calloc: error allocating memory variable=nodempc`),
        // VTK's arrays (`vtkFloatArray (0x1ef2ea0): Unable to allocate 422203279805607
        // elements of size 4 bytes.`), a tool's class in brackets (`[ccPointCloud::resize]
        // Not enough memory!`), DataFusion's memory pool (`Resources exhausted: Failed to
        // allocate additional 131072 bytes for ExternalSorterMerge[0]`), Squid's
        // (`FATAL: xcalloc: Unable to allocate 1073741816 blocks of 392 bytes!`),
        // ESP-IDF's error code (`ESP_ERROR_CHECK failed: esp_err_t 0x101
        // (ESP_ERR_NO_MEM)`), Mbed's (`Error Message: Operator new[] out of memory`),
        // a driver's buffer (`E (118749) camera: Failed to allocate frame buffer`),
        // Zephyr's pools (`<err> net_pkt: Data buffer (704) allocation failed.`), TDEP's
        // (`ERROR: trying to allocate an array of size  -1208014592`), Netty's direct
        // memory (`OutOfDirectMemoryError: failed to allocate 16777216 byte(s) of direct
        // memory`), Valve's tier0 (`Assertion Failed: OUT OF MEMORY`), Valgrind's own
        // heap (`Valgrind's memory management: out of memory:`), Seastar's (Redpanda,
        // ScyllaDB: `seastar - Failed to allocate N bytes`, and the diagnostics it dumps
        // when one fails), V8 embedded in ArangoDB (`FATAL out of memory in V8 (heap
        // setup)`), memcached's `out of memory storing object`, GraphicsMagick's `gm
        // convert: Memory allocation failed (…)`, ClamAV's daemon in libclamav's words
        // for ENOMEM (`instream(10.0.0.1@58172): Can't allocate memory ERROR`), hnswlib's
        // index (`RuntimeError: Not enough memory: loadIndex failed to allocate data`),
        // libjpeg's pool as libvips names it (`VipsJpeg: Insufficient memory (case 4)`).
        "host.program-allocation-failed",
        C::HostAllocFailure,
        Error,
        &["): Out of memory", "cache resources exhausted", "memory allocation failed `", "Insufficient memory to continue the execution", "TeX capacity exceeded", "error allocating memory", "elements of size", "] Not enough memory", "Resources exhausted: ", "blocks of", "allocate an array of size", "ESP_ERR_NO_MEM", "Operator new out of memory", "Operator new[] out of memory", "allocate frame buffer", "allocation failed", "OutOfDirectMemoryError", "Assertion Failed: OUT OF MEMORY", "Valgrind's memory management: out of memory", "seastar - Failed to allocate", "Dumping seastar memory diagnostics", "out of memory in V8", "out of memory storing object", "Memory allocation failed (", "Can't allocate memory ERROR", "RuntimeError: Not enough memory", "Insufficient memory (case"],
        r"\bout of memory in V8\b|\bout of memory storing object\b|\bgm \w+: Memory allocation failed \(|\bOutOfDirectMemoryError: failed to allocate \d+ byte\(s\) of direct memory\b|(?-i:\bAssertion Failed: OUT OF MEMORY\b)|\bValgrind's memory management: out of memory\b|\bseastar - Failed to allocate \d+ bytes\b|\bseastar_memory - Dumping seastar memory diagnostics\b|\bERROR: trying to allocate an array of size\s+-?\d+|\bUnable to allocate \d+ blocks of \d+ bytes\b|\bESP_ERR_NO_MEM\b|\bOperator new(?:\[\])? out of memory\b|: Failed to allocate (?:the )?frame buffer\b|<err> \w+: [^\n]{0,80}?\ballocation failed\b|\bERROR in \w+: error allocating memory\b|\berror allocating memory variable=|\bUnable to allocate \d+ elements of size \d+ bytes\b|\[\w+(?:::\w+)*\] (?-i:Not enough memory)[!.]?\s*$|\bResources exhausted: (?:Failed to allocate additional \d+ bytes|Additional allocation failed)\b|\bFatal: \w+\((?P<bytes>\d+)\): Out of memory\b|\b(?:cache resources exhausted|memory allocation failed) `[^']*' @ (?:error|fatal)/\w+\.c/|\bInsufficient memory to continue the execution of the program\b|TeX capacity exceeded, sorry \[(?:main memory size|pool size|font memory|save size|extra memory)=|\): Can\x27t allocate memory ERROR\b|\bRuntimeError: Not enough memory(?::|\s*$|\s+(?:when|while)\b)|\bInsufficient memory \(case \d+\)",
        "A program ran out of the memory it could get (an allocation it names failed)",
    ),
    rule(
        // libFuzzer stops its target itself past a limit: the whole process's RSS
        // (`==23== ERROR: libFuzzer: out-of-memory (used: 2049Mb; exceeds: 2048Mb)`, or
        // `limit: 2048Mb` in other releases; `-rss_limit_mb`) or one allocation (`out-of-memory (malloc(4294971391))`,
        // `-malloc_limit_mb`).
        "libfuzzer.out-of-memory",
        C::HostAllocFailure,
        Error,
        &["libFuzzer: out-of-memory"],
        r"\blibFuzzer: out-of-memory \((?:malloc\((?P<bytes>\d+)\)|used: (?P<used>\d+)Mb; (?:exceeds|limit): (?P<limit>\d+)Mb)\)",
        "libFuzzer stopped the target at its memory limit (-rss_limit_mb, -malloc_limit_mb)",
    ),
    rule(
        // The Gradle daemon's watch over its own heap: it stops itself after the
        // build (`Daemon will be stopped at the end of the build after running out of
        // JVM memory`, `--status`'s `STOPPED  (after running out of JVM memory)`), or
        // at once (`Expiring Daemon because JVM heap space is exhausted`).
        "gradle.daemon-out-of-memory",
        C::HostAllocFailure,
        Error,
        &["out of JVM memory", "JVM heap space is exhausted"],
        r"\bafter running out of JVM memory\b|\bExpiring Daemon because JVM heap space is exhausted\b",
        "The Gradle daemon ran out of its JVM heap (raise org.gradle.jvmargs=-Xmx…)",
    ),
    rule(
        // HotSpot's fatal-error banner (`hs_err_pid*.log` and the console).
        "jvm.native-allocation-failed",
        C::HostAllocFailure,
        Error,
        &["insufficient memory for the Java", "Native memory allocation"],
        r"There is insufficient memory for the Java Runtime Environment to continue|Native memory allocation \((?:mmap|malloc)\) failed to (?:map|allocate) (?P<bytes>\d+) bytes",
        "The JVM could not get native memory: the host ran out",
    ),
    rule(
        // A JVM's start that could not reserve the heap `-Xmx` asks for (`Could not
        // reserve enough space for 2097152KB object heap`): the address space of a
        // 32-bit JVM, `ulimit -v`, or too little memory and swap under strict overcommit.
        "jvm.heap-reservation-failed",
        C::HostAllocFailure,
        Error,
        &["enough space for"],
        r"\bCould not reserve enough space for (?:\d+KB )?object heap\b",
        "The JVM could not reserve the heap -Xmx asks for (address space, ulimit -v, or strict overcommit)",
    ),
    Rule {
        certainty: Likely,
        ..rule(
            // Dask's worker says its process memory stays high with nothing of its
            // own to spill: memory held outside Dask's data, most often a leak.
            "dask.worker-memory-high",
            C::MemoryGrowth,
            Warn,
            &["Unmanaged memory use is high", "leaking memory?"],
            r"Unmanaged memory use is high\. This may indicate a memory leak|Memory use is high but worker has no data to store to disk\.\s+Perhaps some other process is leaking memory\?",
            "A Dask worker's memory stays high with no data of its own: a leak, most likely",
        )
    },
    rule(
        // Next.js's dev server restarts itself near the heap limit it watches.
        "nextjs.memory-threshold-restart",
        C::MemoryPressure,
        Warn,
        &["approaching the used memory threshold"],
        r"\bServer is approaching the used memory threshold, restarting\b",
        "The Next.js dev server neared its memory threshold and restarted itself",
    ),
    rule(
        // Tomcat's NIO endpoint frees its reserve (the parachute) when an
        // OutOfMemoryError was caught, and says so while memory stays low.
        "tomcat.parachute-gone",
        C::MemoryPressure,
        Warn,
        &["memory usage is low, parachute"],
        r"\bMemory usage is low, parachute is non existent\b",
        "Tomcat's heap ran out and its reserve is spent: the server may start failing",
    ),
    rule(
        // ITK (ANTs, SimpleITK, 3D Slicer) throws its own: `itk::MemoryAllocationError
        // (0x…)` … `Description: Failed to allocate memory for image.`
        "itk.memory-allocation-error",
        C::HostAllocFailure,
        Error,
        &["MemoryAllocationError", "Failed to allocate memory for image"],
        r"\bitk::MemoryAllocationError\b|\bFailed to allocate memory for image\b",
        "ITK could not allocate an image's memory (itk::MemoryAllocationError): host memory ran out",
    ),
    rule(
        "cxx.bad-alloc",
        C::HostAllocFailure,
        Error,
        &["bad_alloc", "bad allocation"],
        // MSVC's std::bad_alloc says `bad allocation` (LightGBM under .NET:
        // `[LightGBM] [Warning] bad allocation`), as the line's last words after a
        // program's tag; alone on a line it is also what Microsoft's page for the
        // class shows.
        r"std::bad_alloc|[\]:]\s*bad allocation\s*$",
        "A C++ allocation failed (std::bad_alloc): host memory ran out",
    ),
    rule(
        "host.out-of-memory-message",
        C::HostAllocFailure,
        Error,
        &["insufficient virtual memory", "Cannot allocate array", "INFO(1)=-13", "INFO(1) = -13", "out of host memory", "Out of host memory", "OUT_OF_HOST_MEMORY", "Failed to allocate host memory", "failed to allocate host memory", "malloc failed", "malloc() failed", "malloc of size", "Out of memory allocating", "out of memory allocating", "Failed to allocate", "failed to allocate buffer of size", "failed to allocate CPU buffer", "Allocation error : not enough memory", "C1060: compiler is out of heap space"],
        // Intel Fortran's runtime: `forrtl: severe (41): insufficient virtual memory`,
        // `(179): Cannot allocate array - overflow on array size calculation`.
        // OpenVINO's CPU plugin: `Failed to allocate 282441216 bytes of memory`, the
        // line's last words (a device's allocation names the device after them).
        // Arrow's memory pool: `malloc of size 1073741824 failed` (a report writes `n`).
        // ggml's CPU backend (llama.cpp, whisper.cpp): `ggml_backend_cpu_buffer_type_alloc_buffer:
        // failed to allocate buffer of size N`, `failed to allocate CPU buffer of size N`.
        // LAMMPS: `ERROR on proc 1: Failed to allocate -156019200 bytes for array _ncachex`.
        // zstd's error string, through the JVM's zstd-jni: `Allocation error : not enough memory`.
        // MSVC's `fatal error C1060: compiler is out of heap space`.
        r"(?i:out of host memory|failed to allocate host memory|forrtl: \w+ \(41\): insufficient virtual memory|forrtl: \w+ \(179\): Cannot allocate array|[SDCZ]MUMPS INFO\(1\)\s*=\s*-13\b|\bmalloc(?:\(\))? failed|\bmalloc of size (?:\d+|n) failed\b|out of memory allocating|^Failed to allocate \d+ bytes of memory\.?\s*$|cpu_buffer_type_alloc_buffer: failed to allocate buffer of size \d+|\bfailed to allocate CPU buffer of size \d+|\bERROR(?: on proc \d+)?: Failed to allocate -?\d+ bytes for array\b|\bAllocation error : not enough memory\b|\bC1060: compiler is out of heap space\b)",
        "A host memory allocation failed",
    ),
    rule(
        // breakpad's minidump_stackwalk reading a dump written on an allocation failure:
        // `Crash reason:  Out of Memory`, or Chromium's own out-of-memory exception code
        // on Windows (`Crash reason:  0xe0000008`, Electron, VS Code).
        "minidump.out-of-memory",
        C::HostAllocFailure,
        Error,
        &["Crash reason:"],
        r"^Crash reason:\s+(?:Out of Memory\b|0xe0000008\b)",
        "The process crashed out of memory (a minidump's crash reason)",
    ),
    rule(
        // Chromium's allocator shim (Chrome, Electron, headless browsers in CI), and
        // its older Windows one (memory_win.cc's `Out of memory, size = 216678811`).
        "chromium.out-of-memory",
        C::HostAllocFailure,
        Error,
        // Its `[pid:tid:time:FATAL:memory.cc(22)]` prefix is read as a prefix.
        &["Out of memory. size=", "Out of memory, size ="],
        r"(?:FATAL:memory(?:_win|_linux|_mac)?\.cc\(\d+\)\] )?Out of memory(?:\. size=|, size = )(?P<bytes>\d+)",
        "Chromium could not allocate {bytes} bytes and aborted (FATAL memory.cc)",
    ),
    rule(
        // .NET's managed heap, and MATLAB's refusals: arrays past its size limit,
        // or past what the machine has.
        "managed.out-of-memory",
        C::HostAllocFailure,
        Error,
        &["OutOfMemoryException", "maximum array size preference"],
        r"\b(?:System\.)?OutOfMemoryException\b|Requested (?P<shape>\d+x\d+(?:x\d+)*) \((?P<size>[\d.]+ ?[KMGT]?B)\) array exceeds maximum array size preference",
        "The program's runtime could not allocate memory",
    ),
    // ---- what the job printed ------------------------------------------------------
    Rule {
        extract: Some(extract_swap_full),
        certainty: Likely,
        cause: Some(Capacity),
        ..rule(
            "free.swap-full",
            C::SwapThrashing,
            Warn,
            &["Swap:"],
            r"^\s*Swap:\s+(?P<total>[\d.,]+[KMGTkmgt]?i?[Bb]?)\s+(?P<used>[\d.,]+[KMGTkmgt]?i?[Bb]?)\s+(?P<free>[\d.,]+[KMGTkmgt]?i?[Bb]?)\s*$",
            "Swap {swap_state}: the machine is thrashing",
        )
    },
    Rule {
        extract: Some(extract_swap_full),
        certainty: Likely,
        cause: Some(Capacity),
        ..rule(
            "top.swap-full",
            C::SwapThrashing,
            Warn,
            &["Swap:"],
            r"^(?:(?P<scale>[KMG]iB) )?Swap:\s*(?:(?P<total>[\d.]+k?) total,\s*(?P<free>[\d.]+k?) free,\s*(?P<used>[\d.]+k?) used|(?P<total2>[\d.]+k?) total,\s*(?P<used2>[\d.]+k?) used,\s*(?P<free2>[\d.]+k?) free)(?:[.,]\s*(?P<avail>[\d.]+k?) avail Mem)?",
            "Swap {swap_state}: the machine is thrashing",
        )
    },
    Rule {
        extract: Some(extract_swap_full),
        certainty: Likely,
        cause: Some(Capacity),
        ..rule(
            // top with its memory shown as bars (`m`): the share used, then the total.
            "top.swap-bar-full",
            C::SwapThrashing,
            Warn,
            &["Swap:"],
            r"^\s*(?P<scale>[KMG]iB) Swap:\s*(?P<pct>[\d.]+)/(?P<total>[\d.]+)\+?\s*\[",
            "Swap {swap_state}: the machine is thrashing",
        )
    },
    Rule {
        extract: Some(extract_ram_and_swap),
        certainty: Likely,
        cause: Some(Capacity),
        ..rule(
            "job.ram-and-swap",
            C::SwapThrashing,
            Warn,
            &["RAM=", "RAM:"],
            r"\bRAM[=:]\s*(?P<ram_used>[\d.]+)\s*/\s*(?P<ram_total>[\d.]+)\s*(?P<ram_unit>[KMGT]i?B)\s*\((?P<ram_pct>[\d.]+)\s*%\).*?\b[Ss]wap[=:]\s*(?P<swap>[\d.]+)\s*(?P<swap_unit>[KMGT]i?B)",
            "RAM {ram_pct}% used ({ram_used}/{ram_total} {ram_unit}) with {swap_used} in swap: the machine is thrashing",
        )
    },
    Rule {
        extract: Some(|_, _| false),
        table_rows: Some(VMSTAT_ROW),
        ..rule(
            "vmstat.header",
            C::SwapThrashing,
            Warn,
            &["swpd"],
            r"^\s*r\s+b\s+swpd\s+free\s+(?:buff|inact)\s+(?:cache|active)\s+si\s+so\b",
            "",
        )
    },
    Rule {
        extract: Some(extract_vmstat_row),
        certainty: Possible,
        cause: Some(Capacity),
        ..rule(
            VMSTAT_ROW,
            C::SwapThrashing,
            Warn,
            &["\u{0}vmstat-row"],
            r"^\s*(?P<r>\d+)\s+(?P<b>\d+)\s+(?P<swpd>\d+)\s+(?P<free>\d+)\s+(?P<buff>\d+)\s+(?P<cache>\d+)\s+(?P<si>\d+)\s+(?P<so>\d+)\s+\d+\s+\d+",
            "vmstat shows pages swapped in and out ({si} KiB/s in, {so} KiB/s out) with {swpd} KiB in swap",
        )
    },
    Rule {
        extract: Some(|_, _| false),
        table_rows: Some("sar.swap-row"),
        ..rule(
            "sar.swap-header",
            C::SwapThrashing,
            Warn,
            &["%swpused"],
            r"kbswpfree\s+kbswpused\s+%swpused",
            "",
        )
    },
    Rule {
        extract: Some(extract_sar_swap_row),
        certainty: Likely,
        cause: Some(Capacity),
        ..rule(
            "sar.swap-row",
            C::SwapThrashing,
            Warn,
            &["\u{0}sar-row"],
            r"^\S+(?:\s+[AP]M)?\s+(?P<free>\d+)\s+(?P<used>\d+)\s+(?P<pct>[\d.]+)\b",
            "sar -S shows swap {pct}% used",
        )
    },
    Rule {
        certainty: Possible,
        cause: Some(Capacity),
        ..rule(
            // Not a load at a clock after it: tegrastats' `SWAP 2640/16384MB … CPU
            // [97%@1984,…]` is a CPU's.
            "prose.swap-full",
            C::SwapThrashing,
            Warn,
            &["swap", "Swap", "SWAP"],
            r"(?i:\bswap\b[^.\n]{0,40}?(?:\bfull\b|\b100\s?%(?:[^@]|$)|\b9[5-9](?:[.,]\d+)?\s?%(?:[^@]|$))|\b(?:RAM|memory)\b[^.\n]{0,40}\bfull\b[^.\n]{0,40}\bswap\b)",
            "The text says swap was full: the machine was thrashing",
        )
    },
    Rule {
        certainty: Possible,
        cause: Some(Capacity),
        ..rule(
            "prose.thrashing",
            C::SwapThrashing,
            Warn,
            &["thrash"],
            // A machine said to thrash (not a cache or a TLB: those thrash without swap).
            r"(?i:\b(?:system|machine|box|server|host|computer|laptop|desktop|node|vm|memory|ram|swap|swapping|kswapd\d*)\b[^.\n]{0,60}\bthrash(?:es|ed|ing)?\b|\bthrash(?:es|ed|ing)\b[^.\n]{0,40}\b(?:swap\w*|memory|ram|the disk)\b|\b(?:severe|heavy|constant|massive) thrashing\b)",
            "The text says the machine was thrashing",
        )
    },
    Rule {
        certainty: Possible,
        cause: Some(Capacity),
        ..rule(
            "prose.swapping-stall",
            C::SwapThrashing,
            Warn,
            &["swap", "Swap", "SWAP"],
            // Swapping and a machine that stopped answering, in one sentence either way round.
            r"(?i:\bswap(?:ping|ped|file|s)?\b[^.\n]{0,80}\b(?:unresponsive|non-responsive|freez\w*|froze|frozen|lock(?:s|ed)? up|lockups?|crawl\w*|sluggish|extremely slow|grind\w* to a halt)\b|\b(?:unresponsive|non-responsive|freez\w*|froze|frozen|lock(?:s|ed)? up|lockups?|crawl\w*|sluggish|extremely slow|grind\w* to a halt)\b[^.\n]{0,80}\bswap(?:ping|ped|file|s)?\b|\bswapping (?:endlessly|constantly|heavily|like crazy|non-?stop)\b|\bheavy swapping\b|\bswap storms?\b)",
            "The text says the machine stalled swapping",
        )
    },
    Rule {
        extract: Some(extract_memory_figure),
        certainty: Likely,
        ..rule(
            "free.memory-used",
            C::MemoryGrowth,
            Warn,
            &["Mem:"],
            r"^\s*Mem:\s+[\d.,]+[KMGTkmgt]?i?\s+(?P<value>[\d.,]+)(?P<unit>[KMGTkmgt]?i?)\s+[\d.,]+[KMGTkmgt]?i?\s",
            "Memory rises reading after reading",
        )
    },
    Rule {
        extract: Some(extract_memory_figure),
        certainty: Likely,
        ..rule(
            "job.memory-figure",
            C::MemoryGrowth,
            Warn,
            // The labels jobs print their own memory under; plain `mem` or `memory`
            // would put most lines of a training log through the rules.
            &["emory usage", "emory_usage", "emory used", "sed memory", "RSS:", "RSS=", "rss:", "rss=", "rss ", "RAM usage", "RAM used", "mem_usage", "mem used", "emory allocated"],
            // The label may say when the figure was taken (`Used memory (after request)`):
            // each moment is a series of its own. A figure after a bare `memory` or a
            // space needs its unit (`rss 555 MB`; `memory 4 workers` is no figure).
            // No literal is a bare `memory:`: training logs print `memory` on most lines
            // and the prefilter's anchors would stop at each.
            r"(?i:\b(?P<label>(?:cpu |host |process |system |ram |resident |current |used )?(?:memory[ _]usage|memory used|mem used|used\s+memory|mem_usage|rss|maxrss|max_rss|ru_maxrss|vmrss|ram usage|ram used|memory allocated)(?:\s*\((?:before|after|at|during|in|on)\b[^)]{0,30}\)| after (?:run|step|epoch|iteration|batch|request|call) \d+| before| after)?)(?:\s+now)?(?P<sep>\s*[:=]\s*|\s+)(?P<value>\d[\d,]*(?:\.\d+)?)\s*(?:(?P<unit>[KMGT]i?B|[KMGT]\b|bytes\b)|\((?P<unit2>[KMGT]i?B)\))?)",
            "Memory rises reading after reading",
        )
    },
    // A table of processes with their memory (ps, top, smem, kubectl top, docker
    // stats): its rows are read as readings by `process_table`.
    Rule {
        extract: Some(|_, _| false),
        table_rows: Some(PROCESS_ROW),
        ..rule(
            "table.processes-header",
            C::MemoryGrowth,
            Warn,
            &[" RSS", "VIRT", "MEMORY(bytes)", "MEM USAGE"],
            r"^\s*(?:[A-Z%/][\w%+()/:.-]*\s+)+(?:RSS|VIRT\s+RES|MEMORY\(bytes\)|MEM USAGE / LIMIT)(?:\s+[A-Z%/][\w%+()/:.-]*)*\s*$",
            "",
        )
    },
    Rule {
        certainty: Likely,
        ..rule(
            PROCESS_ROW,
            C::MemoryGrowth,
            Warn,
            &["\u{0}process-row"],
            r"^\u{0}process-row$",
            "Memory rises snapshot after snapshot",
        )
    },
    Rule {
        // A leak, not yet a failure: how much it grows by is the job's to show.
        certainty: Possible,
        ..rule(
            // A leak checker's report at exit, before the sanitizers' report of a bug:
            // LeakSanitizer's (alone or in ASan), valgrind's memory definitely lost,
            // VTK's debug build (`vtkDebugLeaks has detected LEAKS!`).
            "leakcheck.leaked",
            C::MemoryGrowth,
            Warn,
            &["LeakSanitizer: detected memory leaks", "leaked in", "definitely lost:", "has detected LEAKS"],
            r"LeakSanitizer: detected memory leaks|\bvtkDebugLeaks has detected LEAKS\b|SUMMARY: (?:Address|Leak)Sanitizer: \d+ byte\(s\) leaked in \d+ allocation|definitely lost: [1-9][\d,]* bytes in [\d,]+ blocks",
            "A leak checker found memory the program never freed",
        )
    },
    Rule {
        certainty: Likely,
        ..rule(
            // tracemalloc's comparison of two snapshots (`StatisticDiff`): the lines of
            // code whose allocations grew between them, the first place to look for a leak.
            "tracemalloc.grew",
            C::MemoryGrowth,
            Warn,
            &[": size="],
            r"^\S.*?:\d+: size=(?P<size>[\d.]+ [KMGT]?i?B) \(\+(?P<grew>[\d.]+ [KMGT]?i?B)\), count=\d+ \(\+\d+\)",
            "tracemalloc: allocations at one line grew by {grew} between snapshots (to {size})",
        )
    },
    Rule {
        // Its rise must stand in its clause (`memory should not increase over
        // time` says nothing rose).
        extract: Some(|msg, out| super::claims::rise_stands(msg, out)),
        certainty: Possible,
        ..rule(
            "prose.memory-growth",
            C::MemoryGrowth,
            Warn,
            &[
                "leak", "Leak", "ncreas", "grow", "creep", "climb", "ising from", "rising", "内存", "显存",
            ],
            r"(?P<claim>(?i:\b(?:memory|ram|rss|heap|resident (?:size|set|memory)|working set|private bytes)(?: usage)?\b[^.\n]{0,40}\b(?:slowly |steadily |gradually |constantly )?(?:increas\w*|grow\w*|rising|creep\w*|climb\w*)\b[^.\n]{0,30}?\bfrom (?P<from>(?:\d[\d.]*|<n>)\s*[KMGT]i?B?) (?:to|→|->) (?P<to>(?:\d[\d.]*|<n>)\s*[KMGT]i?B?)|\bleak\w*\b[^.\n]{0,40}?(?P<rate>(?:\d[\d.]*|<n>)\s*[KMGT]i?B|<n>) per (?:epoch|step|iteration|batch|hour|minute|call|request|run|query|inference)|\b(?:continuously|constantly|steadily|ever|always)[- ]increasing (?:memory|ram|rss|heap|resident (?:size|set|memory)|working set|private bytes)\b|\b(?:memory|ram|rss|resident (?:size|set|memory)|working set|private bytes)\b[^.\n]{0,20}\b(?:increas\w*|grow\w*|rising|climb\w*|creep\w*)\b[^.\n]{0,12}?(?P<rate2>~?(?:\d[\d.]*|<n>)(?:\s*[–-]\s*(?:\d[\d.]*|<n>))?\s*[KMGT]i?B)\s*(?:/|per |an? |each )\s*(?:hour|h|min|minute|epoch|step|iteration|day)\b|\bmemory (?:leak (?:occurs|happens|grows|increases)|usage (?:grows|increases)) (?:every|each|per) (?:epoch|step|iteration|batch)|(?P<rate3>\d[\d.,]*\s*[KMGT]i?B) (?:of )?growth (?:in|per|every) (?:\d+ )?(?:hours?|minutes?|days?|requests?)\b|\b(?:memory|ram|rss|resident (?:size|set|memory)|working set|private bytes)(?: usage)?\b[^.\n]{0,40}\b(?:continually|continuously|constantly|steadily|keeps?|kept) (?:increas\w*|grow\w*|rising|climb\w*)[^.\n]{0,30}\b(?:during|over|each|every|after|until)\b|\b(?:memory|ram|rss|resident (?:size|set|memory)|working set|private bytes)(?: usage| consumption| footprint| use)?\b[^.\n]{0,40}?\b(?:keeps?|kept|keeping|continues?|continued|continuing) (?:on |to )?(?:increas\w*|grow\w*|rising|climb\w*)|\b(?:memory|ram|rss|resident (?:size|set|memory)|working set|private bytes)(?: usage| consumption)?\b[^.\n]{0,40}\b(?:grow\w*|increas\w*|rising|climb\w*) (?:linearly|without bound|unbounded|monotonically|indefinitely|over time|with (?:each|every) (?:request|epoch|step|iteration|call|batch))\b|\bleaks? (?:memory|ram)\b,? (?:indefinitely|without bounds?|continuously|constantly|steadily|over time|forever|on (?:each|every))|\bleaks? (?:more than |over |about |around |almost |~)?(?:\d[\d.,]*\s*(?:[KMGT]i?B|gigabytes?|megabytes?)|(?:tens|hundreds|dozens) of (?:gigabytes|megabytes|GBs?|MBs?)) (?:of )?(?:memory|ram)\b|\b(?:results? in|leads? to|causes?) (?:ever-?|constantly |steadily |continuously )?(?:growing|increasing) (?:memory|ram|rss)\b|\b(?:memory|ram|rss|heap|resident (?:size|set|memory)|working set|private bytes)(?: usage| consumption)?\b[^.\n]{0,30}\b(?:increas\w*|grow\w*|rising|climb\w*) by (?:almost |about |around |roughly |~)?(?P<rate4>\d[\d.,]*\s*[KMGT]?i?B?) (?:every|each|per|a|an) (?:second|sec|minute|min|hour|epoch|step|iteration|batch|request|call|day)\b|\b(?:memory|ram|rss|heap)(?: usage| consumption)?\b[^.\n]{0,40}\b(?:grow\w*|increas\w*)(?: very| really)?(?: rapidly| quickly| fast)?,? without (?:any )?bounds?\b|\bmemory leak\b[^.\n]{0,80}\b(?:grows|increases) (?:over time|steadily|continuously|until)\b|\b(?:memory|ram|rss|heap)(?: usage| consumption)?\b[^.\n]{0,30}\b(?:was|is|has been|kept|keeps) (?:increas\w*|grow\w*|rising|climb\w*) (?:constantly|continuously|steadily|all the time|every day|day by day|over time)\b|(?:内存|显存)[^\n]{0,24}?(?:一直|不断|不斷|持续|持續|逐渐|逐漸|逐步|越来越|越來越|缓慢|緩慢|慢慢)[^\n]{0,8}?(?:增长|增長|上涨|上漲|涨|漲|增加|升高|变大|變大|大|上升|攀升|提高)))",
            "The text says memory kept growing",
        )
    },
];

/// Rows of a `vmstat` table are numbers only: they are read while the table its
/// header opened lasts (the literal never occurs in text).
pub const VMSTAT_ROW: &str = "vmstat.swapping";
/// Rows of a table of processes with their memory, read under its header.
pub const PROCESS_ROW: &str = "table.process-memory";

pub(super) const HOST_ALLOC_FAILURE: ClassInfo = ClassInfo {
    class: C::HostAllocFailure,
    name: "host_alloc_failure",
    id: ids::LOG_HOST_ALLOC_FAILURE,
    title: "A host memory allocation failed",
    why: "The process asked for more host memory than the system would give it (RAM and swap under the \
          overcommit policy, a cgroup or ulimit -v limit, or Windows' commit limit of RAM plus paging file). \
          Unlike an OOM kill this raises in the program, so the traceback says where.",
    fix: "See what the allocation was and whether it should be that large (a batch or array far larger than \
          intended, a whole dataset loaded at once).\nLower the peak: smaller batches, load data lazily \
          (numpy.memmap, a streaming dataset), fewer DataLoader workers; or give the job more memory (more RAM, \
          a larger cgroup limit, on Windows a larger paging file).\nMeasure the job's peak: memtriage run -- python train.py.",
    cause: Capacity,
    confirm: "The traceback names the allocation; memtriage run -- python train.py shows the peak before it.",
};

pub(super) const MEMORY_GROWTH: ClassInfo = ClassInfo {
    class: C::MemoryGrowth,
    name: "memory_growth",
    id: ids::LOG_MEMORY_GROWTH,
    title: "Memory rises reading after reading",
    why: "Memory that keeps rising over steps or epochs runs into the OOM killer in the end: a leak (tensors \
          kept in a list, a growing cache, loss accumulated with its graph), or DataLoader workers un-sharing \
          their parent's dataset page by page (copy-on-write through reference counts).",
    fix: "Confirm and see who grows: memtriage run -- python train.py (per-process growth, copy-on-write in \
          workers).\nCommon causes: total_loss += loss (use loss.item()), appending outputs without .detach().cpu(), \
          a dataset of Python lists and dicts read by workers (keep it in numpy arrays), caches without a bound.",
    cause: UserCode,
    confirm: "memtriage run -- python train.py measures each process's growth and copy-on-write.",
};

pub(super) const SWAP_THRASHING: ClassInfo = ClassInfo {
    class: C::SwapThrashing,
    name: "swap_thrashing",
    id: ids::LOG_SWAP_THRASHING,
    title: "Swap is nearly full and busy: the machine is thrashing",
    why: "When RAM runs out and swap takes the rest, every step waits on the disk for pages: the job crawls \
          for hours instead of dying, and the OOM killer comes late or never.",
    fix: "Give the job the RAM it needs or make it need less (smaller batches, fewer workers, fewer jobs per \
          node). On dedicated training nodes consider swapoff -a (or a memory cgroup with memory.swap.max=0) \
          so a job that does not fit fails fast.\nWatch it live: vmstat 1 (si/so columns), cat /proc/pressure/memory.",
    cause: Configuration,
    confirm: "vmstat 1 while the job runs: si/so above zero every second and cat /proc/pressure/memory 'full' rising.",
};
