// Fitting the Newton forward-difference form (see newton_form.h).
#include "sweep/newton_form.h"

namespace opscope::sweep {

NewtonForm NewtonForm::Fit(const std::array<std::array<std::array<Int128, 3>, 3>, 3>& samples) {
  auto d = samples;
  // Forward differences along each axis in turn: (f0, f1, f2) -> (f0, f1 − f0, f2 − 2f1 + f0).
  auto diff = [](Int128& f0, Int128& f1, Int128& f2) {
    f2 = f2 - 2 * f1 + f0;
    f1 = f1 - f0;
  };
  for (int b = 0; b < 3; ++b)
    for (int c = 0; c < 3; ++c) diff(d[0][b][c], d[1][b][c], d[2][b][c]);
  for (int a = 0; a < 3; ++a)
    for (int c = 0; c < 3; ++c) diff(d[a][0][c], d[a][1][c], d[a][2][c]);
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b) diff(d[a][b][0], d[a][b][1], d[a][b][2]);
  NewtonForm form;
  for (uint8_t a = 0; a < 3; ++a)
    for (uint8_t b = 0; b < 3; ++b)
      for (uint8_t c = 0; c < 3; ++c)
        if (d[a][b][c] != 0) form.terms_.push_back({a, b, c, d[a][b][c]});
  return form;
}

}  // namespace opscope::sweep
