/* symc's C launcher for compiled Triton kernels: cuLaunchKernel through libcuda, found by dlopen.
 *
 * Built once per machine by c_launch.py (a CPython extension, no CUDA headers needed):
 *
 *   init(libcuda_path)                                  -> None (OSError if it cannot load)
 *   launcher = make(function, block_x, shared, kinds, device, name)
 *   launcher(grid_x, stream, *args)                     -> None; one cuLaunchKernel
 *   repeat(launcher, n, grid_x, stream, *args)          -> seconds for n launches (benchmarks)
 *
 * `kinds` has one letter per kernel argument, in order: 'p' a device pointer (an int), 'i' int32,
 * 'I' uint32, 'l' int64, 'L' uint64, 'f' float32 (a Python float), 'd' float64. Each value gets
 * an 8-byte slot; 4 zeroed slots follow (the scratch pointers Triton's kernels take last: the
 * driver reads as many parameters as the kernel declares). A grid of 0 launches nothing.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#define MAX_ARGS 96
#define EXTRA_SLOTS 4
#define CUDA_ERROR_INVALID_CONTEXT 201

typedef int CUresult;
typedef CUresult (*launch_fn)(void *, unsigned, unsigned, unsigned, unsigned, unsigned,
                              unsigned, unsigned, void *, void **, void **);
typedef CUresult (*error_name_fn)(CUresult, const char **);
typedef CUresult (*device_get_fn)(int *, int);
typedef CUresult (*ctx_retain_fn)(void **, int);
typedef CUresult (*ctx_set_fn)(void *);

static launch_fn cu_launch = NULL;
static error_name_fn cu_error_name = NULL;
static device_get_fn cu_device_get = NULL;
static ctx_retain_fn cu_ctx_retain = NULL;
static ctx_set_fn cu_ctx_set = NULL;

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    uint64_t function;
    unsigned block;
    unsigned shared;
    int device;
    int n;
    char kinds[MAX_ARGS];
    PyObject *name;
} Launcher;

static PyTypeObject LauncherType;

static int set_context(int device) {
    /* A thread with no current context (one torch never used): the device's primary one. */
    int dev;
    void *ctx;
    if (!cu_device_get || !cu_ctx_retain || !cu_ctx_set) return 0;
    if (cu_device_get(&dev, device) != 0 || cu_ctx_retain(&ctx, dev) != 0) return 0;
    return cu_ctx_set(ctx) == 0;
}

static int read_arg(char kind, PyObject *o, uint64_t *slot) {
    switch (kind) {
    case 'p': case 'L': {
        unsigned long long v = PyLong_AsUnsignedLongLong(o);
        if (v == (unsigned long long)-1 && PyErr_Occurred()) return 0;
        *slot = v;
        return 1;
    }
    case 'l': {
        long long v = PyLong_AsLongLong(o);
        if (v == -1 && PyErr_Occurred()) return 0;
        int64_t w = v;
        memcpy(slot, &w, sizeof w);
        return 1;
    }
    case 'i': case 'I': {
        long long v = PyLong_AsLongLong(o);
        if (v == -1 && PyErr_Occurred()) return 0;
        if (kind == 'i' ? (v < INT32_MIN || v > INT32_MAX) : (v < 0 || v > UINT32_MAX)) {
            PyErr_Format(PyExc_OverflowError, "expected a %s argument, found %lld",
                         kind == 'i' ? "int32" : "uint32", v);
            return 0;
        }
        uint32_t w = (uint32_t)(int64_t)v;
        memcpy(slot, &w, sizeof w);
        return 1;
    }
    case 'f': case 'd': {
        double v = PyFloat_AsDouble(o);
        if (v == -1.0 && PyErr_Occurred()) return 0;
        if (kind == 'f') {
            float w = (float)v;
            memcpy(slot, &w, sizeof w);
        } else {
            memcpy(slot, &v, sizeof v);
        }
        return 1;
    }
    }
    PyErr_Format(PyExc_ValueError, "expected an argument kind in 'pILlifd', found %c", kind);
    return 0;
}

/* Reads (grid, stream, *kernel args) into `slots`/`params`; 0 with an exception set on error. */
static int prepare(Launcher *self, PyObject *const *args, Py_ssize_t nargs,
                   unsigned long long *grid, unsigned long long *stream, uint64_t *slots,
                   void **params) {
    if (nargs != self->n + 2) {
        PyErr_Format(PyExc_TypeError, "expected %d positional arguments (grid, stream, %d "
                     "kernel arguments) launching %U, found %zd", self->n + 2, self->n,
                     self->name, nargs);
        return 0;
    }
    *grid = PyLong_AsUnsignedLongLong(args[0]);
    if (*grid == (unsigned long long)-1 && PyErr_Occurred()) return 0;
    if (*grid > 0x7fffffffULL) {
        PyErr_Format(PyExc_OverflowError, "expected a grid of at most 2**31-1 blocks launching "
                     "%U, found %llu", self->name, *grid);
        return 0;
    }
    *stream = PyLong_AsUnsignedLongLong(args[1]);
    if (*stream == (unsigned long long)-1 && PyErr_Occurred()) return 0;
    int n = self->n;
    for (int i = 0; i < n; i++) {
        slots[i] = 0;
        if (!read_arg(self->kinds[i], args[i + 2], &slots[i])) return 0;
        params[i] = &slots[i];
    }
    for (int i = n; i < n + EXTRA_SLOTS; i++) {
        slots[i] = 0;
        params[i] = &slots[i];
    }
    return 1;
}

/* One cuLaunchKernel (none for an empty grid); 0 with an exception set on error. */
static int launch_once(Launcher *self, unsigned long long grid, unsigned long long stream,
                       void **params) {
    if (grid == 0) return 1;
    CUresult r = cu_launch((void *)(uintptr_t)self->function, (unsigned)grid, 1, 1, self->block,
                           1, 1, self->shared, (void *)(uintptr_t)stream, params, NULL);
    if (r == CUDA_ERROR_INVALID_CONTEXT && set_context(self->device)) {
        r = cu_launch((void *)(uintptr_t)self->function, (unsigned)grid, 1, 1, self->block, 1, 1,
                      self->shared, (void *)(uintptr_t)stream, params, NULL);
    }
    if (r != 0) {
        const char *what = "unknown";
        if (cu_error_name) cu_error_name(r, &what);
        PyErr_Format(PyExc_RuntimeError, "expected cuLaunchKernel to launch %U (grid %llu, "
                     "block %u, shared %u), found CUresult %d (%s)", self->name, grid,
                     self->block, self->shared, r, what);
        return 0;
    }
    return 1;
}

static PyObject *launcher_call(PyObject *self_, PyObject *const *args, size_t nargsf,
                               PyObject *kwnames) {
    Launcher *self = (Launcher *)self_;
    unsigned long long grid, stream;
    uint64_t slots[MAX_ARGS + EXTRA_SLOTS];
    void *params[MAX_ARGS + EXTRA_SLOTS];
    if (kwnames && PyTuple_GET_SIZE(kwnames)) {
        PyErr_SetString(PyExc_TypeError, "expected no keyword arguments launching a kernel");
        return NULL;
    }
    if (!prepare(self, args, PyVectorcall_NARGS(nargsf), &grid, &stream, slots, params))
        return NULL;
    if (!launch_once(self, grid, stream, params)) return NULL;
    Py_RETURN_NONE;
}

/* repeat(launcher, n, grid, stream, *args) -> seconds for n launches from C (the driver's own
 * cost per launch, measured without Python between launches: bench/launch_overhead.py). */
static PyObject *repeat(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs < 2 || Py_TYPE(args[0]) != &LauncherType) {
        PyErr_SetString(PyExc_TypeError, "expected repeat(launcher, n, grid, stream, *args)");
        return NULL;
    }
    Launcher *self = (Launcher *)args[0];
    long n = PyLong_AsLong(args[1]);
    if (n == -1 && PyErr_Occurred()) return NULL;
    unsigned long long grid, stream;
    uint64_t slots[MAX_ARGS + EXTRA_SLOTS];
    void *params[MAX_ARGS + EXTRA_SLOTS];
    if (!prepare(self, args + 2, nargs - 2, &grid, &stream, slots, params)) return NULL;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long i = 0; i < n; i++)
        if (!launch_once(self, grid, stream, params)) return NULL;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return PyFloat_FromDouble((double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec));
}

static void launcher_dealloc(PyObject *self) {
    Py_XDECREF(((Launcher *)self)->name);
    Py_TYPE(self)->tp_free(self);
}

static PyObject *launcher_repr(PyObject *self) {
    Launcher *l = (Launcher *)self;
    return PyUnicode_FromFormat("<symc C launcher %U block=%u shared=%u kinds=%s>", l->name,
                                l->block, l->shared, l->kinds);
}

static PyTypeObject LauncherType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "symc_claunch.Launcher",
    .tp_basicsize = sizeof(Launcher),
    .tp_dealloc = launcher_dealloc,
    .tp_vectorcall_offset = offsetof(Launcher, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_repr = launcher_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
};

static PyObject *make(PyObject *mod, PyObject *args) {
    unsigned long long function;
    unsigned block, shared;
    const char *kinds;
    int device;
    PyObject *name;
    if (!PyArg_ParseTuple(args, "KIIsiU", &function, &block, &shared, &kinds, &device, &name))
        return NULL;
    if (!cu_launch) {
        PyErr_SetString(PyExc_RuntimeError, "expected init() to have loaded libcuda, found none");
        return NULL;
    }
    size_t n = strlen(kinds);
    if (n >= MAX_ARGS || strspn(kinds, "pILlifd") != n) {
        PyErr_Format(PyExc_ValueError, "expected at most %d argument kinds in 'pILlifd', "
                     "found %s", MAX_ARGS - 1, kinds);
        return NULL;
    }
    Launcher *l = PyObject_New(Launcher, &LauncherType);
    if (!l) return NULL;
    l->vectorcall = launcher_call;
    l->function = function;
    l->block = block;
    l->shared = shared;
    l->device = device;
    l->n = (int)n;
    memset(l->kinds, 0, sizeof l->kinds);
    memcpy(l->kinds, kinds, n);
    Py_INCREF(name);
    l->name = name;
    return (PyObject *)l;
}

static PyObject *init(PyObject *mod, PyObject *args) {
    const char *path;
    if (!PyArg_ParseTuple(args, "s", &path)) return NULL;
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        PyErr_Format(PyExc_OSError, "expected to dlopen %s, found: %s", path, dlerror());
        return NULL;
    }
    launch_fn launch = (launch_fn)dlsym(lib, "cuLaunchKernel");
    if (!launch) {
        PyErr_Format(PyExc_OSError, "expected cuLaunchKernel in %s, found none", path);
        return NULL;
    }
    cu_launch = launch;
    cu_error_name = (error_name_fn)dlsym(lib, "cuGetErrorName");
    cu_device_get = (device_get_fn)dlsym(lib, "cuDeviceGet");
    cu_ctx_retain = (ctx_retain_fn)dlsym(lib, "cuDevicePrimaryCtxRetain");
    cu_ctx_set = (ctx_set_fn)dlsym(lib, "cuCtxSetCurrent");
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"make", make, METH_VARARGS, "make(function, block, shared, kinds, device, name)"},
    {"init", init, METH_VARARGS, "init(libcuda_path)"},
    {"repeat", (PyCFunction)(void (*)(void))repeat, METH_FASTCALL,
     "repeat(launcher, n, grid, stream, *args) -> seconds for n launches"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "symc_claunch", NULL, -1, methods};

PyMODINIT_FUNC PyInit_symc_claunch(void) {
    if (PyType_Ready(&LauncherType) < 0) return NULL;
    return PyModule_Create(&module);
}
