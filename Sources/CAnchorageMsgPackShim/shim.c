#include "CAnchorageMsgPackShim.h"
