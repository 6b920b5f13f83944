int stub;
