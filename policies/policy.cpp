#include "policies/policy.h"
