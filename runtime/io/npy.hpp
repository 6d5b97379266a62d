// NumPy .npy files (format 1.0/2.0/3.0): one array per file, the exchange format of the
// `minigrad run` tool. Writing goes through xtensor's xnpy; reading checks the file itself
// first (see npy.cpp for what xnpy's reader cannot handle).
// Invariants: a load either returns exactly the array the header describes, in row-major
// order and native byte order, or throws UserError naming the file and the defect; it
// never allocates more than the file holds.
#pragma once
#include <string>

#include "minigrad/ir/array.hpp"

namespace mg::io {

// Reads a .npy file holding f32 ('<f4'), f64 ('<f8'), i64 ('<i8') or bool ('|b1') data,
// either byte order, C or Fortran order; 0-d and empty arrays allowed. Each defect is a
// UserError naming the file: no such file, a bad magic string or version, a header that is
// not the dict {'descr', 'fortran_order', 'shape'}, another dtype (named in the message,
// never converted), negative or overflowing dimensions, data shorter or longer than the
// shape needs, bool bytes other than 0 and 1.
Array load_npy(const std::string& path);

// Writes `a` (any dtype, 0-d and empty included) as a little-endian, C-order .npy file
// that numpy.load reads back exactly. An I/O failure is a UserError naming the path.
void save_npy(const std::string& path, const Array& a);

// "f64[2,3] ('<f8')": how messages name what a .npy file holds.
std::string describe_npy(const Array& a);

}  // namespace mg::io
